package mcptools

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// adviceCall is one tool call an error advises: the tool and its JSON arguments. Every
// call carries its tool's required arguments (advice_test checks it against tools/list).
type adviceCall struct {
	tool string
	args []kv // in order, so the text reads the way a model would write it
}

type kv struct {
	k string
	v any
}

func (c adviceCall) String() string {
	var b strings.Builder
	b.WriteString("call ")
	b.WriteString(c.tool)
	b.WriteString(" {")
	for i, a := range c.args {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(plainJSON(a.k))
		b.WriteByte(':')
		b.Write(plainJSON(a.v))
	}
	b.WriteString("}")
	return b.String()
}

// plainJSON is v as JSON without HTML escaping: a model reads "<an id>", not "\u003can id\u003e".
func plainJSON(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// stepCalls renders one step as the tool calls that take it, and a few words when a
// step is no call (retry, pass an argument to the same tool).
func stepCalls(tool string, s graph.Step) (calls []adviceCall, words string) {
	call := func(t string, args ...kv) []adviceCall { return []adviceCall{{tool: t, args: args}} }
	switch s.Do {
	case graph.StepList:
		switch s.Kind {
		case graph.ListIdentities:
			return call("graph_find", kv{"kind", "identity"}), ""
		case graph.ListDevices, graph.ListBound:
			return call("graph_find", kv{"kind", "device"}), ""
		case graph.ListUnbound:
			return call("graph_unbound"), ""
		case graph.ListRobots:
			return call("robot_status"), ""
		case graph.ListRelationTypes:
			return call("graph_suggest_tags", kv{"namespace", "relation"}), ""
		case graph.ListTags:
			return call("graph_suggest_tags"), ""
		case graph.ListChangelog:
			if s.ID != "" {
				return call("graph_changelog", kv{"target", s.ID}), ""
			}
			return call("graph_changelog"), ""
		case graph.ListRelations, graph.ListNotes, graph.ListClients:
			// A node's relations, notes and clients show in its browse; with no node
			// known, browse either end (or a device, for its clients).
			id := s.ID
			if id == "" {
				switch s.Kind {
				case graph.ListClients:
					id = "<a device's id>"
				case graph.ListNotes:
					id = "<the note's target id>"
				default:
					id = "<either end's id>"
				}
			}
			return call("graph_browse", kv{"id", id}), ""
		}
	case graph.StepShow:
		return call("graph_browse", kv{"id", s.ID}), ""
	case graph.StepBind:
		args := []kv{{"ref", s.Ref}}
		if s.Identity != "" {
			args = append(args, kv{"identity", s.Identity})
		} else {
			args = append(args, kv{"new_name", s.Name})
		}
		if s.Arg != "" {
			args = append(args, kv{s.Arg, graph.StepValue(s.Value)})
		}
		return call("graph_bind", args...), ""
	case graph.StepPass:
		if s.Value == "" {
			return nil, "call " + tool + " again without " + strconv.Quote(s.Arg)
		}
		return nil, "call " + tool + " again with " + strconv.Quote(s.Arg) + ": " + string(plainJSON(graph.StepValue(s.Value)))
	case graph.StepUpdate:
		return call("graph_relate", kv{"op", "update"}, kv{"id", s.ID}), ""
	case graph.StepRemove:
		if s.ID == "" {
			return call("graph_relate", kv{"op", "remove"}), ""
		}
		return call("graph_relate", kv{"op", "remove"}, kv{"id", s.ID}), ""
	case graph.StepDelNote:
		return append(call("graph_browse", kv{"id", s.ID}), call("graph_note", kv{"action", "delete"}, kv{"note_id", "<an old note's id>"})...), ""
	case graph.StepArm:
		return call("robot_arm", kv{"robot", s.Robot}), ""
	case graph.StepDetect:
		return call("robot_detect", kv{"robot", s.Robot}), ""
	case graph.StepGrasp:
		obj := s.Object
		if obj == "" {
			obj = "<an object id robot_detect lists>"
		}
		return call("robot_grasp", kv{"robot", s.Robot}, kv{"object", obj}), ""
	case graph.StepRelease:
		return call("robot_release", kv{"robot", s.Robot}), ""
	case graph.StepStop:
		return call("robot_stop", kv{"robot", s.Robot}), ""
	case graph.StepNavigate:
		args := []kv{{"robot", s.Robot}}
		if s.X != nil && s.Y != nil {
			args = append(args, kv{"x", *s.X}, kv{"y", *s.Y})
		}
		return call("robot_navigate", args...), ""
	case graph.StepPage:
		return nil, "ask for less (a smaller limit or a narrower filter) and page with the cursor"
	case graph.StepRetry:
		return nil, "retry in a moment"
	case graph.StepServe:
		return nil, "start `devgraph serve` (robots live in the serving process)"
	}
	return nil, ""
}

// adviceText renders an error's next steps for a model: "Next: call graph_find
// {"kind":"identity"}", several joined by "; or" (a step of two calls by ", then").
func adviceText(tool string, steps []graph.Step) string {
	var parts []string
	for _, s := range steps {
		calls, words := stepCalls(tool, s)
		var p []string
		for _, c := range calls {
			p = append(p, c.String())
		}
		if words != "" {
			p = append(p, words)
		}
		if len(p) > 0 {
			parts = append(parts, strings.Join(p, ", then "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Next: " + strings.Join(parts, "; or ") + "."
}

// adviceCalls lists every tool call steps advise (for the required-arguments test).
func adviceCalls(tool string, steps []graph.Step) []adviceCall {
	var out []adviceCall
	for _, s := range steps {
		calls, _ := stepCalls(tool, s)
		out = append(out, calls...)
	}
	return out
}
