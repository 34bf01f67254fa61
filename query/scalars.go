package query

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
)

// Int64Scalar carries 64-bit integers (changelog seq, byte counts). It is sent as a decimal
// string so no client truncates it to a 32-bit Int or a float; it accepts a string or an
// integer literal.
var Int64Scalar = graphql.NewScalar(graphql.ScalarConfig{
	Name:        "Int64",
	Description: "A 64-bit integer, sent as a decimal string (e.g. \"1234567890123\"); accepted as a string or an integer.",
	Serialize: func(v any) any {
		switch n := v.(type) {
		case uint64:
			return strconv.FormatUint(n, 10)
		case *uint64:
			if n == nil {
				return nil
			}
			return strconv.FormatUint(*n, 10)
		case int64:
			return strconv.FormatInt(n, 10)
		case int:
			return strconv.Itoa(n)
		case uint32:
			return strconv.FormatUint(uint64(n), 10)
		}
		return nil
	},
	ParseValue: func(v any) any {
		switch n := v.(type) {
		case string:
			return parseInt64(n)
		case float64:
			if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
				return int64(n)
			}
		case int:
			return int64(n)
		case int64:
			return n
		case json.Number:
			return parseInt64(string(n))
		}
		return nil
	},
	ParseLiteral: func(v ast.Value) any {
		switch lit := v.(type) {
		case *ast.StringValue:
			return parseInt64(lit.Value)
		case *ast.IntValue:
			return parseInt64(lit.Value)
		}
		return nil
	},
})

func parseInt64(s string) any {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil
	}
	return n
}

// TimeScalar is an RFC 3339 time in UTC with nanoseconds. As input it also takes a
// duration before now ("24h", "90m", "7d").
var TimeScalar = graphql.NewScalar(graphql.ScalarConfig{
	Name:        "Time",
	Description: "An RFC 3339 time (UTC, nanoseconds), e.g. \"2026-11-22T05:00:00Z\". Input also accepts a duration before now: \"24h\", \"90m\", \"7d\".",
	Serialize: func(v any) any {
		switch t := v.(type) {
		case time.Time:
			if t.IsZero() {
				return nil
			}
			return t.UTC().Format(time.RFC3339Nano)
		case *time.Time:
			if t == nil || t.IsZero() {
				return nil
			}
			return t.UTC().Format(time.RFC3339Nano)
		}
		return nil
	},
	ParseValue: func(v any) any {
		if s, ok := v.(string); ok {
			return parseTime(s)
		}
		return nil
	},
	ParseLiteral: func(v ast.Value) any {
		if s, ok := v.(*ast.StringValue); ok {
			return parseTime(s.Value)
		}
		return nil
	},
})

// badTime is a Time input that is not a time. graphql-go can only say "Expected type
// Time" of a value ParseValue refuses, so the value is kept and the resolver refuses it
// with the message every interface gives (timeArg).
type badTime string

func parseTime(s string) any {
	t, err := graph.ParseWhen("", s, time.Now())
	if err != nil || t.IsZero() {
		return badTime(s)
	}
	return t
}

// timeArg reads a Time input: the zero time when absent, graph.ParseWhen's error naming
// field when it is not a time.
func timeArg(field string, v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t, nil
	case badTime:
		if _, err := graph.ParseWhen(field, string(t), time.Now()); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, graph.FieldErrorf(graph.EINVALID, field, "%s is empty; give a duration back from now (30m, 24h, 7d), an RFC 3339 time or a date", field)
	}
	return time.Time{}, nil
}

// JSONScalar is any JSON value (identity data, event before/after bodies, device attrs).
var JSONScalar = graphql.NewScalar(graphql.ScalarConfig{
	Name:        "JSON",
	Description: "Any JSON value.",
	Serialize: func(v any) any {
		switch j := v.(type) {
		case json.RawMessage:
			if len(j) == 0 {
				return nil
			}
			var out any
			if err := json.Unmarshal(j, &out); err != nil {
				return nil
			}
			return out
		case []byte:
			var out any
			if err := json.Unmarshal(j, &out); err != nil {
				return nil
			}
			return out
		case map[string]string:
			if j == nil {
				return nil
			}
			return j
		}
		return v
	},
	ParseValue: func(v any) any { return jsonInput{v} },
	ParseLiteral: func(v ast.Value) any {
		out, ok := literalJSON(v, 0)
		if !ok {
			return nil
		}
		return jsonInput{out}
	},
})

// jsonInput wraps a parsed JSON argument so a JSON null literal is told apart from an
// absent or invalid argument.
type jsonInput struct{ v any }

func literalJSON(v ast.Value, depth int) (any, bool) {
	if depth > 64 {
		return nil, false
	}
	switch lit := v.(type) {
	case *ast.StringValue:
		return lit.Value, true
	case *ast.IntValue:
		n, err := strconv.ParseFloat(lit.Value, 64)
		return n, err == nil
	case *ast.FloatValue:
		n, err := strconv.ParseFloat(lit.Value, 64)
		return n, err == nil
	case *ast.BooleanValue:
		return lit.Value, true
	case *ast.EnumValue:
		if lit.Value == "null" {
			return nil, true
		}
		return lit.Value, true
	case *ast.ListValue:
		out := make([]any, 0, len(lit.Values))
		for _, e := range lit.Values {
			x, ok := literalJSON(e, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case *ast.ObjectValue:
		out := make(map[string]any, len(lit.Fields))
		for _, f := range lit.Fields {
			x, ok := literalJSON(f.Value, depth+1)
			if !ok {
				return nil, false
			}
			out[f.Name.Value] = x
		}
		return out, true
	}
	return nil, false
}
