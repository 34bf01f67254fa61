package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

type queryOptions struct {
	*common
	file      string
	varsFile  string
	operation string
	vars      []string
}

func newQueryCmd(c *common) *cobra.Command {
	o := &queryOptions{common: c}
	cmd := &cobra.Command{
		Use:   "query [DOC | -f FILE | < stdin]",
		Short: "run a GraphQL document and print the JSON answer",
		Example: `  devgraph query '{ identities { totalCount } }'
  devgraph query -f find.graphql --var text=jdxi
  echo '{ unbound { ref name } }' | devgraph --demo query`,
		Args: nargs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuery(cmd.Context(), o, args, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "read the document from FILE (- for stdin)")
	f.StringVar(&o.varsFile, "vars-file", "", "variables as a JSON object in FILE")
	f.StringVar(&o.operation, "operation", "", "the operation to run when the document has several")
	f.StringArrayVar(&o.vars, "var", nil, "a variable `NAME=VALUE`; VALUE is JSON when it parses as JSON, else a string (repeatable)")
	return cmd
}

func runQuery(ctx context.Context, o *queryOptions, pos []string, out io.Writer) error {
	e := o.e
	req := query.Request{OperationName: o.operation}
	switch {
	case len(pos) == 1 && o.file != "":
		return usagef("query: give the document as an argument or with -f, not both")
	case len(pos) == 1 && pos[0] != "-":
		req.Query = pos[0]
	case o.file != "" && o.file != "-":
		b, err := readQueryFile(ctx, o.file, "f")
		if err != nil {
			return err
		}
		req.Query = string(b)
	default:
		in, undo, _ := pollableReader(e.stdin)
		b, err := readCapped(ctx, in, "the document on stdin", "f")
		undo()
		if err != nil {
			return err
		}
		req.Query = string(b)
	}
	if len(bytes.TrimSpace([]byte(req.Query))) == 0 {
		return usagef("query: the document is empty; e.g. devgraph query '{ identities { totalCount } }'")
	}
	if o.varsFile != "" {
		b, err := readQueryFile(ctx, o.varsFile, "vars-file")
		if err != nil {
			return err
		}
		// Checked before decoding: encoding/json would read these as U+FFFD.
		if f, bad := graph.FindJSONTextFault(b); bad {
			return graph.FieldErrorf(graph.EINVALID, "vars-file", "--vars-file %s: %s", o.varsFile, graph.ErrorMessage(f.RefusalIn("variables")))
		}
		if err := json.Unmarshal(b, &req.Variables); err != nil {
			return graph.FieldErrorf(graph.EINVALID, "vars-file", "%s is not a JSON object of variables: %v", o.varsFile, err)
		}
	}
	for _, v := range o.vars {
		k, val, err := query.ParseVar(v)
		if err != nil {
			return err
		}
		if req.Variables == nil {
			req.Variables = map[string]any{}
		}
		req.Variables[k] = val
	}

	s, err := e.open(ctx, o.common, openAny)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx = o.withCaller(ctx)
	// Refused rather than sent: json.Marshal would replace invalid UTF-8 with U+FFFD.
	if err := graph.CheckValueText(req); err != nil {
		return err
	}
	// The request as a server reads it (without json.Marshal's \u003c for <, > and &),
	// under the server's body limit whether or not one answers.
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false)
	if err := je.Encode(req); err != nil {
		return err
	}
	body := bytes.TrimSuffix(enc.Bytes(), []byte("\n"))
	if max := maxQueryInput(); int64(len(body)) > max {
		return graph.Errorf(graph.ELIMIT, "the request is larger than %d bytes; send a smaller query or fewer variables", max)
	}
	var resp json.RawMessage
	if s.client != nil {
		hr, err := s.client.Post(ctx, "/graphql", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer hr.Body.Close()
		if resp, err = io.ReadAll(hr.Body); err != nil {
			return graph.Errorf(graph.EUNAVAILABLE, "reading the server's answer: %v", err)
		}
	} else {
		exec, err := query.New(s.svc, query.Options{})
		if err != nil {
			return err
		}
		defer exec.Close()
		r := exec.Execute(ctx, req, false)
		if resp, err = json.Marshal(r); err != nil {
			return err
		}
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, resp, "", "  "); err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "the server's answer is not JSON: %.100s", resp)
	}
	pretty.WriteByte('\n')
	if _, err := out.Write(pretty.Bytes()); err != nil {
		return err
	}
	// The JSON is printed either way; errors also make the exit status 1.
	var parsed struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(resp, &parsed) == nil && len(parsed.Errors) > 0 {
		return graph.Errorf(graph.EINVALID, "%s", fmt.Sprintf("query failed: %s", parsed.Errors[0].Message))
	}
	return nil
}

// maxQueryInput bounds what query reads from -f, --vars-file or stdin: the number an HTTP
// server reads of a GraphQL body (query.Executor.MaxRequestBytes with the default limits),
// so the CLI takes no document a server would refuse, and an endless file is refused
// after that many bytes instead of filling memory.
func maxQueryInput() int64 {
	l := query.DefaultLimits()
	return int64(l.MaxDocumentBytes+l.MaxVariablesBytes) + 4096
}

// readQueryFile reads name (for the flag named field), at most maxQueryInput bytes.
func readQueryFile(ctx context.Context, name, field string) ([]byte, error) {
	r, closeIn, err := openInput(ctx, nil, name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer closeIn()
	return readCapped(ctx, r, name, field)
}

// readCapped reads r to its end, refusing more than maxQueryInput bytes (ELIMIT naming
// field) as soon as it sees them; a read waiting on a pipe ends with ctx.
func readCapped(ctx context.Context, r io.Reader, what, field string) ([]byte, error) {
	max := maxQueryInput()
	defer endReadsWith(ctx, r)()
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, graph.FieldErrorf(graph.EINVALID, field, "cannot read %s: %v", what, unwrapPath(err))
	}
	if int64(len(b)) > max {
		return nil, graph.FieldErrorf(graph.ELIMIT, field, "%s is larger than %d bytes, the most a GraphQL request may carry (document and variables); send a smaller one", what, max)
	}
	return b, nil
}

// pollableReader is pollableStdin for any reader: an *os.File is made pollable where it
// can be, anything else (a test's buffer) is returned as it is.
func pollableReader(r io.Reader) (io.Reader, func(), error) {
	if f, ok := r.(*os.File); ok {
		return pollableStdin(f)
	}
	return r, func() {}, nil
}
