package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

// The bad-input table (issue 11): every row is one operation with one bad value, tried on
// every interface — the CLI opening the database file, the CLI through a running server's
// socket, GraphQL over HTTP and MCP (a JSON-RPC session on the real binary's stdio). Each
// must refuse it with an error (CLI exit 1 or 2 and one line; GraphQL errors[].extensions.code;
// MCP an isError result or a JSON-RPC error) that names the field and states the same
// problem on every interface (the advice after it may differ: verbs, fields, tool names),
// and nothing may be written: the changelog head and a full export are the same after.
// One fixture database (two bound synths cabled together, a tag, a note, a spare identity)
// is made on the file, copied, and one `serve --http --stdio` holds the copy for the three
// interfaces through it (GraphQL with a bearer token that may prune, so a bad prune meets
// the check of its before). A two-line message, which is valid, lands whole everywhere.
//
// The problem part of a message is compared: the advice after it names verbs, fields or
// tools, and the field is spelled per interface (why, fromPort, --from-port, a JSON path
// such as arguments.hints[0]); see problem.

// via is one way in.
type via int

const (
	viaFile via = iota
	viaSocket
	viaGraphQL
	viaMCP
	nVias
)

var viaNames = [nVias]string{"cli-file", "cli-socket", "graphql", "mcp"}

// badInput is one row: the operation and its bad value, said the way each interface says it.
type badInput struct {
	name  string
	code  string   // the graph error code GraphQL must carry
	field string   // the input as the service names it (snake_case); "" when no one field is at fault
	want  []string // words every interface's message holds (a suggestion, a limit)
	cli   []string // the CLI's arguments (both CLI interfaces)
	gql   string   // the GraphQL document; bad values travel in vars
	vars  string   // the variables as raw JSON text (may hold raw bytes), "" for none
	tool  string   // the MCP tool
	args  string   // its arguments as raw JSON text (may hold raw bytes)
	// mcpRefuses is set where MCP has no such operation by design (it has no prune): the
	// call must still be refused, saying this, and write nothing; its words are its own.
	mcpRefuses string
}

// outcome is what one interface answered.
type outcome struct {
	failed bool   // the call was refused
	msg    string // the message: one line
	code   string // GraphQL's extensions.code; the MCP form (isError, rpc N); the CLI's exit
	field  string // GraphQL's extensions.field
	raw    string // everything, for the failure report
}

// rawJSON quotes s as a JSON string escaping only what JSON requires, so invalid UTF-8
// travels as the raw bytes a hostile client would send (json.Marshal would replace it).
func rawJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rawList is a JSON array of raw strings.
func rawList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = rawJSON(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func plusAll(sign string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = sign + s
	}
	return out
}

// badFixture is what the rows refer to: made once on the file, then copied for the server.
type badFixture struct {
	relID, noteID string
}

// badInputs is the table.
func badInputs(fx badFixture) []badInput {
	long := func(n int) string { return strings.Repeat("x", n) }
	msg1025 := strings.Repeat("m", graph.MaxMsgLen+1)
	tags33 := numbered("status:t", 33)
	hints33 := numbered("usb_id=0582:", 33)
	for i := range hints33 {
		hints33[i] = fmt.Sprintf("usb_id=0582:%04x", i)
	}
	fps65 := make([]string, 65)
	for i := range fps65 {
		fps65[i] = fmt.Sprintf(`{"kind":"usb_id","value":"0582:%04x"}`, i)
	}
	attrs17 := map[string]string{}
	var attrFlags17 []string
	for i := 0; i < graph.MaxRelationAttrs+1; i++ {
		attrs17[fmt.Sprintf("k%d", i)] = "v"
		attrFlags17 = append(attrFlags17, "--attr", fmt.Sprintf("k%d=v", i))
	}
	attrs17JSON, _ := json.Marshal(attrs17)
	bigAttrs := map[string]string{} // 16 keys of 256-byte values: each within its limit, 4 KiB over in all
	for i := 0; i < graph.MaxRelationAttrs; i++ {
		bigAttrs[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", graph.MaxRelationAttrVal)
	}
	const (
		tagQ      = `mutation($target: ID!, $add: [String!], $remove: [String!], $message: String) { tag(target: $target, add: $add, remove: $remove, message: $message) { tags { id } } }`
		noteQ     = `mutation($target: ID!, $body: String!, $kind: String, $message: String) { addNote(target: $target, body: $body, kind: $kind, message: $message) { id } }`
		createQ   = `mutation($name: String!, $slug: String, $data: JSON, $hints: [FingerprintInput!], $tags: [String!], $message: String) { createIdentity(name: $name, slug: $slug, data: $data, hints: $hints, tags: $tags, message: $message) { id } }`
		renameQ   = `mutation($id: ID!, $name: String!, $message: String) { renameIdentity(id: $id, name: $name, message: $message) { id } }`
		updateQ   = `mutation($id: ID!, $name: String, $data: JSON, $message: String) { updateIdentity(id: $id, name: $name, data: $data, message: $message) { id } }`
		deleteQ   = `mutation($id: ID!, $message: String) { deleteIdentity(id: $id, message: $message) { id } }`
		restoreQ  = `mutation($id: ID!) { restoreIdentity(id: $id) { id } }`
		mergeQ    = `mutation($from: ID!, $into: ID!, $message: String) { mergeIdentities(from: $from, into: $into, message: $message) { id } }`
		hintAddQ  = `mutation($id: ID!, $hints: [FingerprintInput!]!, $message: String) { addHints(id: $id, hints: $hints, message: $message) { id } }`
		hintRemQ  = `mutation($id: ID!, $hints: [FingerprintInput!]!) { removeHints(id: $id, hints: $hints) { id } }`
		bindQ     = `mutation($ref: String!, $identity: ID, $newName: String, $slug: String, $message: String) { bind(ref: $ref, identity: $identity, newName: $newName, slug: $slug, message: $message) { events } }`
		unbindQ   = `mutation($ref: String!) { unbind(ref: $ref) { id } }`
		noteDelQ  = `mutation($id: ID!, $message: String) { deleteNote(id: $id, message: $message) { id } }`
		relateQ   = `mutation($input: RelateInput!, $message: String) { relate(input: $input, message: $message) { action } }`
		relUpdQ   = `mutation($id: ID!, $input: RelationUpdateInput!) { updateRelation(id: $id, input: $input) { action } }`
		unrelateQ = `mutation($id: ID!) { unrelate(id: $id) { action } }`
		navQ      = `mutation($robot: ID!, $x: Float!, $y: Float!) { robotNavigate(robot: $robot, x: $x, y: $y, timeoutS: 1) { status } }`
		logQ      = `query($filter: EventFilter) { changelog(filter: $filter, first: 1) { edges { node { seq } } } }`
		pathQ     = `query($from: ID!, $to: ID!, $maxDepth: Int) { path(from: $from, to: $to, maxDepth: $maxDepth) { found } }`
		subQ      = `query($around: ID, $depth: Int) { subgraph(around: $around, depth: $depth) { nodes { id } } }`
		traceQ    = `query($from: ID!, $port: String, $direction: String) { trace(from: $from, port: $port, direction: $direction) { ends } }`
		relsQ     = `query($filter: RelationFilter) { relations(filter: $filter) { totalCount } }`
		pruneQ    = `mutation($before: Time!) { pruneChangelog(before: $before) { dropped } }`
		matchQ    = `query($fingerprints: [FingerprintInput!]!) { match(fingerprints: $fingerprints) { confidence } }`
	)
	fp := func(kind, value string) string {
		return `{"kind":` + rawJSON(kind) + `,"value":` + rawJSON(value) + `}`
	}
	o := func(kv ...string) string { // a JSON object from key, raw-JSON-value pairs
		var parts []string
		for i := 0; i < len(kv); i += 2 {
			parts = append(parts, rawJSON(kv[i])+":"+kv[i+1])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	s := rawJSON
	tagRow := func(name, field string, add []string, want ...string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: field, want: want,
			cli: append([]string{"tag", "jdxi"}, plusAll("+", add)...),
			gql: tagQ, vars: o("target", s("jdxi"), "add", rawList(add)),
			tool: "graph_tag", args: o("target", s("jdxi"), "add", rawList(add))}
	}
	msgRow := func(name, m string, want ...string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: "message", want: want,
			cli: []string{"tag", "jdxi", "+status:msg", "-m", m},
			gql: tagQ, vars: o("target", s("jdxi"), "add", `["status:msg"]`, "message", s(m)),
			tool: "graph_tag", args: o("target", s("jdxi"), "add", `["status:msg"]`, "why", s(m))}
	}
	createRow := func(name, field, nm string, want ...string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: field, want: want,
			cli: []string{"identity", "create", nm},
			gql: createQ, vars: o("name", s(nm)),
			tool: "graph_identity", args: o("action", s("create"), "name", s(nm))}
	}
	noteRow := func(name, body string, want ...string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: "body", want: want,
			cli: []string{"note", "add", "jdxi", body},
			gql: noteQ, vars: o("target", s("jdxi"), "body", s(body)),
			tool: "graph_note", args: o("target", s("jdxi"), "body", s(body))}
	}
	hintRow := func(name, field string, hints []string, want ...string) badInput {
		var gfps, mfps []string
		for _, h := range hints {
			k, v, _ := strings.Cut(h, "=")
			gfps = append(gfps, fp(k, v))
			mfps = append(mfps, s(h))
		}
		return badInput{name: name, code: graph.EINVALID, field: field, want: want,
			cli: append([]string{"hint", "add", "jdxi"}, hints...),
			gql: hintAddQ, vars: o("id", s("jdxi"), "hints", "["+strings.Join(gfps, ",")+"]"),
			tool: "graph_identity", args: o("action", s("hint_add"), "id", s("jdxi"), "hints", "["+strings.Join(mfps, ",")+"]")}
	}
	slugRow := func(name, slug string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: "slug",
			cli: []string{"identity", "create", "Slug Test", "--slug", slug},
			gql: createQ, vars: o("name", s("Slug Test"), "slug", s(slug)),
			tool: "graph_identity", args: o("action", s("create"), "name", s("Slug Test"), "slug", s(slug))}
	}
	// relateRow relates keystep → jdxi with the given type, ports, attrs and new-type.
	relateRow := func(name, code, field, typ, fromPort string, attrs map[string]string, newType bool, want ...string) badInput {
		cli := []string{"relate", "keystep", typ, "jdxi"}
		in := []string{"from", s("keystep"), "to", s("jdxi"), "type", s(typ)}
		args := []string{"op", s("add"), "from", s("keystep"), "to", s("jdxi"), "type", s(typ)}
		if fromPort != "" {
			cli = append(cli, "--from-port", fromPort)
			in = append(in, "fromPort", s(fromPort))
			args = append(args, "from_port", s(fromPort))
		}
		if attrs != nil {
			var kv []string
			for k, v := range attrs {
				cli = append(cli, "--attr", k+"="+v)
				kv = append(kv, k, s(v))
			}
			in = append(in, "attrs", o(kv...))
			args = append(args, "attrs", o(kv...))
		}
		if newType {
			cli = append(cli, "--new-type")
			in = append(in, "newType", "true")
			args = append(args, "new_type", "true")
		}
		return badInput{name: name, code: code, field: field, want: want, cli: cli,
			gql: relateQ, vars: o("input", o(in...)), tool: "graph_relate", args: o(args...)}
	}
	navRow := func(name, field, x, y, xJSON, yJSON string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: field,
			cli: []string{"robot", "navigate", "scout", x, y, "--timeout", "1s"},
			gql: navQ, vars: o("robot", s("scout"), "x", xJSON, "y", yJSON),
			tool: "robot_navigate", args: o("robot", s("scout"), "x", xJSON, "y", yJSON, "timeout_s", "1")}
	}
	logRow := func(name, field, flag, value string) badInput {
		return badInput{name: name, code: graph.EINVALID, field: field,
			cli: []string{"changelog", "--" + flag, value},
			gql: logQ, vars: o("filter", o(field, s(value))),
			tool: "graph_changelog", args: o(field, s(value))}
	}

	rows := []badInput{
		// Unknown ids: NOT_FOUND with the closest id suggested.
		{name: "tag/unknown-target", code: graph.ENOTFOUND, want: []string{"jdx1", "identity:jdxi"},
			cli: []string{"tag", "jdx1", "+role:synth"}, gql: tagQ, vars: o("target", s("jdx1"), "add", `["role:synth"]`),
			tool: "graph_tag", args: o("target", s("jdx1"), "add", `["role:synth"]`)},
		{name: "note/unknown-target", code: graph.ENOTFOUND, want: []string{"jdx1", "identity:jdxi"},
			cli: []string{"note", "add", "jdx1", "hello"}, gql: noteQ, vars: o("target", s("jdx1"), "body", s("hello")),
			tool: "graph_note", args: o("target", s("jdx1"), "body", s("hello"))},
		{name: "rename/unknown-id", code: graph.ENOTFOUND, want: []string{"jdx1", "identity:jdxi"},
			cli: []string{"identity", "rename", "jdx1", "New Name"}, gql: renameQ, vars: o("id", s("jdx1"), "name", s("New Name")),
			tool: "graph_identity", args: o("action", s("rename"), "id", s("jdx1"), "name", s("New Name"))},
		{name: "delete/unknown-id", code: graph.ENOTFOUND, want: []string{"keystpe", "identity:keystep"},
			cli: []string{"identity", "delete", "keystpe"}, gql: deleteQ, vars: o("id", s("keystpe")),
			tool: "graph_identity", args: o("action", s("delete"), "id", s("keystpe"))},
		{name: "restore/never-existed", code: graph.ENOTFOUND, want: []string{"nosuch"},
			cli: []string{"identity", "restore", "nosuch"}, gql: restoreQ, vars: o("id", s("nosuch")),
			tool: "graph_identity", args: o("action", s("restore"), "id", s("nosuch"))},
		{name: "merge/unknown-into", code: graph.ENOTFOUND, want: []string{"jdx1", "identity:jdxi"},
			cli: []string{"identity", "merge", "spare", "jdx1"}, gql: mergeQ, vars: o("from", s("spare"), "into", s("jdx1")),
			tool: "graph_identity", args: o("action", s("merge"), "id", s("spare"), "into", s("jdx1"))},
		{name: "hint-add/unknown-id", code: graph.ENOTFOUND, want: []string{"jdx1", "identity:jdxi"},
			cli: []string{"hint", "add", "jdx1", "usb_id=0582:0001"}, gql: hintAddQ, vars: o("id", s("jdx1"), "hints", "["+fp("usb_id", "0582:0001")+"]"),
			tool: "graph_identity", args: o("action", s("hint_add"), "id", s("jdx1"), "hints", `["usb_id=0582:0001"]`)},
		{name: "bind/unknown-device", code: graph.ENOTFOUND, want: []string{"usb:9-9"},
			cli: []string{"bind", "usb:9-9", "jdxi"}, gql: bindQ, vars: o("ref", s("usb:9-9"), "identity", s("jdxi")),
			tool: "graph_bind", args: o("ref", s("usb:9-9"), "identity", s("jdxi"))},
		{name: "bind/unknown-identity", code: graph.ENOTFOUND, want: []string{"jdx1", "identity:jdxi"},
			cli: []string{"bind", "usb:3-1", "jdx1"}, gql: bindQ, vars: o("ref", s("usb:3-1"), "identity", s("jdx1")),
			tool: "graph_bind", args: o("ref", s("usb:3-1"), "identity", s("jdx1"))},
		{name: "unbind/unknown-device", code: graph.ENOTFOUND, want: []string{"usb:9-9"},
			cli: []string{"unbind", "usb:9-9"}, gql: unbindQ, vars: o("ref", s("usb:9-9")),
			tool: "graph_unbind", args: o("ref", s("usb:9-9"))},
		{name: "note-delete/unknown-id", code: graph.ENOTFOUND, want: []string{"note:01900000-0000-7000-8000-000000000000"},
			cli: []string{"note", "delete", "note:01900000-0000-7000-8000-000000000000"}, gql: noteDelQ, vars: o("id", s("note:01900000-0000-7000-8000-000000000000")),
			tool: "graph_note", args: o("action", s("delete"), "note_id", s("note:01900000-0000-7000-8000-000000000000"))},
		{name: "relate/unknown-from", code: graph.ENOTFOUND, want: []string{"keystpe", "identity:keystep"},
			cli: []string{"relate", "keystpe", "controls", "jdxi"}, gql: relateQ, vars: o("input", o("from", s("keystpe"), "to", s("jdxi"), "type", s("controls"))),
			tool: "graph_relate", args: o("op", s("add"), "from", s("keystpe"), "to", s("jdxi"), "type", s("controls"))},
		{name: "unrelate/unknown-id", code: graph.ENOTFOUND, want: []string{"rel:01900000-0000-7000-8000-000000000000"},
			cli: []string{"unrelate", "rel:01900000-0000-7000-8000-000000000000"}, gql: unrelateQ, vars: o("id", s("rel:01900000-0000-7000-8000-000000000000")),
			tool: "graph_relate", args: o("op", s("remove"), "id", s("rel:01900000-0000-7000-8000-000000000000"))},
		{name: "relation-update/unknown-id", code: graph.ENOTFOUND, want: []string{"rel:01900000-0000-7000-8000-000000000000"},
			cli: []string{"relation", "update", "rel:01900000-0000-7000-8000-000000000000", "--attr", "colour=red"}, gql: relUpdQ,
			vars: o("id", s("rel:01900000-0000-7000-8000-000000000000"), "input", o("attrs", o("colour", s("red")))),
			tool: "graph_relate", args: o("op", s("update"), "id", s("rel:01900000-0000-7000-8000-000000000000"), "attrs", o("colour", s("red")))},
		{name: "trace/unknown-node", code: graph.ENOTFOUND, want: []string{"nosuch"},
			cli: []string{"trace", "nosuch"}, gql: traceQ, vars: o("from", s("nosuch")),
			tool: "graph_trace", args: o("from", s("nosuch"))},

		// Tags: namespace:value, [a-z0-9][a-z0-9._-]* each side, ≤ 32 and ≤ 64.
		tagRow("tag/no-colon", "tag", []string{"rolesynth"}, "rolesynth"),
		tagRow("tag/bad-chars", "tag", []string{"role:syn$th"}, "syn$th"),
		tagRow("tag/empty", "tag", []string{""}),
		tagRow("tag/empty-namespace", "tag", []string{":synth"}),
		tagRow("tag/empty-value", "tag", []string{"role:"}),
		tagRow("tag/namespace-too-long", "tag", []string{long(graph.MaxTagNamespace+1) + ":x"}, "32"),
		tagRow("tag/value-too-long", "tag", []string{"role:" + long(graph.MaxTagValue+1)}, "64"),
		tagRow("tag/invalid-utf8", "tag", []string{"role:syn\xffth"}),
		tagRow("tag/nul", "tag", []string{"role:syn\x00th"}),
		withCode(graph.ELIMIT, tagRow("tag/33-added", "add", tags33, "32")),
		{name: "tag/33-removed", code: graph.ELIMIT, field: "remove", want: []string{"32"},
			cli: append([]string{"tag", "jdxi"}, plusAll("-", tags33)...), gql: tagQ, vars: o("target", s("jdxi"), "remove", rawList(tags33)),
			tool: "graph_tag", args: o("target", s("jdxi"), "remove", rawList(tags33))},
		{name: "tag/target-is-a-tag", code: graph.EINVALID, want: []string{"tag:role:synth"},
			cli: []string{"tag", "tag:role:synth", "+status:x"}, gql: tagQ, vars: o("target", s("tag:role:synth"), "add", `["status:x"]`),
			tool: "graph_tag", args: o("target", s("tag:role:synth"), "add", `["status:x"]`)},
		{name: "create/bad-tag", code: graph.EINVALID, field: "tag", want: []string{"rolesynth"},
			cli: []string{"identity", "create", "Tagged", "--tag", "rolesynth"}, gql: createQ, vars: o("name", s("Tagged"), "tags", `["rolesynth"]`),
			tool: "graph_tag", args: o("target", s("jdxi"), "add", `["rolesynth"]`)},

		// Messages: ≤ 1,024 bytes of UTF-8 without NUL, on every write.
		msgRow("message/1025-bytes", msg1025, "1024"),
		msgRow("message/invalid-utf8", "bad \xff byte"),
		msgRow("message/lone-surrogate-bytes", "bad \xed\xa0\x80 surrogate"),
		msgRow("message/nul", "bad \x00 byte"),
		{name: "message/1025-bytes-on-note", code: graph.EINVALID, field: "message", want: []string{"1024"},
			cli: []string{"note", "add", "jdxi", "fine", "-m", msg1025}, gql: noteQ, vars: o("target", s("jdxi"), "body", s("fine"), "message", s(msg1025)),
			tool: "graph_note", args: o("target", s("jdxi"), "body", s("fine"), "why", s(msg1025))},
		{name: "message/invalid-utf8-on-create", code: graph.EINVALID, field: "message",
			cli: []string{"identity", "create", "Fine Name", "-m", "\xff"}, gql: createQ, vars: o("name", s("Fine Name"), "message", s("\xff")),
			tool: "graph_identity", args: o("action", s("create"), "name", s("Fine Name"), "why", s("\xff"))},
		{name: "message/nul-on-bind", code: graph.EINVALID, field: "message",
			cli: []string{"bind", "usb:3-1", "--new", "Nano", "-m", "a\x00b"}, gql: bindQ, vars: o("ref", s("usb:3-1"), "newName", s("Nano"), "message", s("a\x00b")),
			tool: "graph_bind", args: o("ref", s("usb:3-1"), "new_name", s("Nano"), "why", s("a\x00b"))},
		{name: "message/1025-bytes-on-relate", code: graph.EINVALID, field: "message", want: []string{"1024"},
			cli: []string{"relate", "keystep", "controls", "jdxi", "-m", msg1025}, gql: relateQ, vars: o("input", o("from", s("keystep"), "to", s("jdxi"), "type", s("controls")), "message", s(msg1025)),
			tool: "graph_relate", args: o("op", s("add"), "from", s("keystep"), "to", s("jdxi"), "type", s("controls"), "why", s(msg1025))},
		{name: "message/invalid-utf8-on-delete", code: graph.EINVALID, field: "message",
			cli: []string{"identity", "delete", "spare", "-m", "\xfe\xff"}, gql: deleteQ, vars: o("id", s("spare"), "message", s("\xfe\xff")),
			tool: "graph_identity", args: o("action", s("delete"), "id", s("spare"), "why", s("\xfe\xff"))},

		// Names: non-empty, ≤ 200 bytes, UTF-8, no NUL.
		createRow("name/empty", "name", ""),
		createRow("name/201-bytes", "name", long(graph.MaxNameLen+1), "200"),
		createRow("name/nul", "name", "Bad\x00Name"),
		createRow("name/invalid-utf8", "name", "Bad\xffName"),
		{name: "rename/empty", code: graph.EINVALID, field: "name",
			cli: []string{"identity", "rename", "jdxi", ""}, gql: renameQ, vars: o("id", s("jdxi"), "name", s("")),
			tool: "graph_identity", args: o("action", s("rename"), "id", s("jdxi"), "name", s(""))},
		{name: "rename/201-bytes", code: graph.EINVALID, field: "name", want: []string{"200"},
			cli: []string{"identity", "rename", "jdxi", long(graph.MaxNameLen + 1)}, gql: renameQ, vars: o("id", s("jdxi"), "name", s(long(graph.MaxNameLen+1))),
			tool: "graph_identity", args: o("action", s("rename"), "id", s("jdxi"), "name", s(long(graph.MaxNameLen+1)))},
		{name: "update/invalid-utf8-name", code: graph.EINVALID, field: "name",
			cli: []string{"identity", "update", "jdxi", "--name", "\xc3\x28"}, gql: updateQ, vars: o("id", s("jdxi"), "name", s("\xc3\x28")),
			tool: "graph_identity", args: o("action", s("update"), "id", s("jdxi"), "name", s("\xc3\x28"))},
		{name: "bind/new-name-invalid-utf8", code: graph.EINVALID, field: "new_name",
			cli: []string{"bind", "usb:3-1", "--new", "Nano\xff"}, gql: bindQ, vars: o("ref", s("usb:3-1"), "newName", s("Nano\xff")),
			tool: "graph_bind", args: o("ref", s("usb:3-1"), "new_name", s("Nano\xff"))},

		// Notes: ≤ 16 KiB, non-empty, UTF-8, no NUL, a known kind.
		noteRow("note/16385-bytes", long(graph.MaxNoteLen+1), "16384"),
		noteRow("note/empty", ""),
		noteRow("note/invalid-utf8", "bad \xff note"),
		noteRow("note/nul", "bad \x00 note"),
		{name: "note/unknown-kind", code: graph.EINVALID, field: "kind", want: []string{"urgent"},
			cli: []string{"note", "add", "jdxi", "fine", "--kind", "urgent"}, gql: noteQ, vars: o("target", s("jdxi"), "body", s("fine"), "kind", s("urgent")),
			tool: "graph_note", args: o("target", s("jdxi"), "body", s("fine"), "kind", s("urgent"))},

		// Identity data: a JSON object ≤ 64 KiB.
		{name: "data/over-64KiB", code: graph.EINVALID, field: "data", want: []string{"65536"},
			cli: []string{"identity", "update", "jdxi", "--data", `{"k":"` + long(graph.MaxDataLen) + `"}`},
			gql: updateQ, vars: o("id", s("jdxi"), "data", `{"k":"`+long(graph.MaxDataLen)+`"}`),
			tool: "graph_identity", args: o("action", s("update"), "id", s("jdxi"), "data", `{"k":"`+long(graph.MaxDataLen)+`"}`)},
		{name: "data/not-an-object", code: graph.EINVALID, field: "data",
			cli: []string{"identity", "create", "Data Test", "--data", `[1,2]`}, gql: createQ, vars: o("name", s("Data Test"), "data", `[1,2]`),
			tool: "graph_identity", args: o("action", s("create"), "name", s("Data Test"), "data", `[1,2]`)},
		{name: "data/string-not-object", code: graph.EINVALID, field: "data",
			cli: []string{"identity", "update", "jdxi", "--data", `"text"`}, gql: updateQ, vars: o("id", s("jdxi"), "data", `"text"`),
			tool: "graph_identity", args: o("action", s("update"), "id", s("jdxi"), "data", `"text"`)},

		// Slugs: [a-z0-9][a-z0-9._-]{0,63}.
		slugRow("slug/bad-chars", "bad slug!"),
		slugRow("slug/65-chars", long(65)),
		slugRow("slug/leading-dash", "-dash"),
		slugRow("slug/invalid-utf8", "slug\xff"),

		// Hints / fingerprints: kind=value of a known kind, ≤ 32 per call, ≤ 64 per match.
		hintRow("hint/unknown-kind", "hints", []string{"colour=red"}, "colour"),
		hintRow("hint/empty-value", "hints", []string{"usb_id="}),
		hintRow("hint/invalid-utf8", "hints", []string{"alsa_card_id=JD\xff"}),
		withCode(graph.ELIMIT, hintRow("hint/33-per-call", "hints", hints33, "32")),
		{name: "hint-remove/unknown-kind", code: graph.EINVALID, field: "hints", want: []string{"colour"},
			cli: []string{"hint", "remove", "jdxi", "colour=red"}, gql: hintRemQ, vars: o("id", s("jdxi"), "hints", "["+fp("colour", "red")+"]"),
			tool: "graph_identity", args: o("action", s("hint_remove"), "id", s("jdxi"), "hints", `["colour=red"]`)},
		{name: "create/hint-unknown-kind", code: graph.EINVALID, field: "hints", want: []string{"colour"},
			cli: []string{"identity", "create", "Hinted", "--hint", "colour=red"}, gql: createQ, vars: o("name", s("Hinted"), "hints", "["+fp("colour", "red")+"]"),
			tool: "graph_identity", args: o("action", s("create"), "name", s("Hinted"), "hints", `["colour=red"]`)},
		{name: "match/65-fingerprints", code: graph.ELIMIT, field: "fingerprints", want: []string{"64"},
			cli: []string{"query", matchQ, "--var", "fingerprints=[" + strings.Join(fps65, ",") + "]"}, gql: matchQ, vars: o("fingerprints", "["+strings.Join(fps65, ",")+"]"),
			tool: "graph_query", args: o("query", s(matchQ), "variables", o("fingerprints", "["+strings.Join(fps65, ",")+"]"))},

		// Relations.
		relateRow("relate/unknown-type", graph.EINVALID, "type", "cabel", "", nil, false, "cabel"),
		relateRow("relate/reserved-via", graph.EINVALID, "type", "via", "", nil, true, "via"),
		relateRow("relate/reserved-linked", graph.EINVALID, "type", "linked", "", nil, true, "linked"),
		relateRow("relate/reserved-subscribed", graph.EINVALID, "type", "subscribed", "", nil, true, "subscribed"),
		relateRow("relate/bad-type-chars", graph.EINVALID, "type", "Bad Type!", "", nil, true),
		relateRow("relate/port-65-bytes", graph.EINVALID, "from_port", "controls", long(graph.MaxPort+1), nil, false, "64"),
		relateRow("relate/port-invalid-utf8", graph.EINVALID, "from_port", "controls", "MIDI\xffOUT", nil, false),
		relateRow("relate/attr-value-257-bytes", graph.EINVALID, "attrs", "controls", "", map[string]string{"note": long(graph.MaxRelationAttrVal + 1)}, false, "256"),
		relateRow("relate/attr-value-nul", graph.EINVALID, "attrs", "controls", "", map[string]string{"note": "a\x00b"}, false),
		relateRow("relate/cable-without-kind", graph.EINVALID, "attrs", "cable", "Out 2", map[string]string{"colour": "red"}, false, "kind"),
		relateRow("relate/cable-bad-kind", graph.EINVALID, "attrs", "cable", "Out 2", map[string]string{"kind": "xlr"}, false, "xlr"),
		{name: "relate/17-attrs", code: graph.EINVALID, field: "attrs", want: []string{"16"},
			cli: append([]string{"relate", "keystep", "controls", "jdxi"}, attrFlags17...), gql: relateQ,
			vars: o("input", o("from", s("keystep"), "to", s("jdxi"), "type", s("controls"), "attrs", string(attrs17JSON))),
			tool: "graph_relate", args: o("op", s("add"), "from", s("keystep"), "to", s("jdxi"), "type", s("controls"), "attrs", string(attrs17JSON))},
		{name: "relate/self-loop", code: graph.EINVALID, want: []string{"self"},
			cli: []string{"relate", "jdxi", "controls", "jdxi"}, gql: relateQ, vars: o("input", o("from", s("jdxi"), "to", s("jdxi"), "type", s("controls"))),
			tool: "graph_relate", args: o("op", s("add"), "from", s("jdxi"), "to", s("jdxi"), "type", s("controls"))},
		{name: "relation-update/attr-value-257-bytes", code: graph.EINVALID, field: "attrs", want: []string{"256"},
			cli: []string{"relation", "update", fx.relID, "--attr", "note=" + long(graph.MaxRelationAttrVal+1)}, gql: relUpdQ,
			vars: o("id", s(fx.relID), "input", o("attrs", o("kind", s("midi-din"), "note", s(long(graph.MaxRelationAttrVal+1))))),
			tool: "graph_relate", args: o("op", s("update"), "id", s(fx.relID), "attrs", o("kind", s("midi-din"), "note", s(long(graph.MaxRelationAttrVal+1))))},
		{name: "relation-update/port-65-bytes", code: graph.EINVALID, field: "to_port", want: []string{"64"},
			cli: []string{"relation", "update", fx.relID, "--to-port", long(graph.MaxPort + 1)}, gql: relUpdQ,
			vars: o("id", s(fx.relID), "input", o("toPort", s(long(graph.MaxPort+1)))),
			tool: "graph_relate", args: o("op", s("update"), "id", s(fx.relID), "to_port", s(long(graph.MaxPort+1)))},

		// Robots: finite coordinates within ±10000 m.
		navRow("navigate/x-out-of-range", "x", "20000", "1", "20000", "1"),
		navRow("navigate/y-out-of-range", "y", "1", "-100000", "1", "-100000"),
		navRow("navigate/x-infinite", "x", "Inf", "1", "1e999", "1"),

		// Changelog filters and prune.
		logRow("changelog/bad-since", "since", "since", "yesterday-ish"),
		logRow("changelog/bad-until", "until", "until", "2024-13-45"),
		logRow("changelog/bad-actor-glob", "actor", "actor", "mcp:[x"),
		logRow("changelog/bad-action-glob", "action", "action", "tag.[a-"),

		// Traversal bounds.
		{name: "path/depth-over-bound", code: graph.EINVALID, field: "max_depth", want: []string{"8"},
			cli: []string{"path", "keystep", "jdxi", "--max-depth", "99"}, gql: pathQ, vars: o("from", s("keystep"), "to", s("jdxi"), "maxDepth", "99"),
			tool: "graph_trace", args: o("from", s("keystep"), "to", s("jdxi"), "max_depth", "99")},
		{name: "subgraph/depth-over-bound", code: graph.EINVALID, field: "depth", want: []string{"4"},
			cli: []string{"export", "--format", "dot", "--around", "keystep", "--depth", "9"}, gql: subQ, vars: o("around", s("keystep"), "depth", "9"),
			tool: "graph_query", args: o("query", s(subQ), "variables", o("around", s("keystep"), "depth", "9"))},
		{name: "direction/unknown", code: graph.EINVALID, field: "direction", want: []string{"sideways"},
			cli: []string{"relations", "keystep", "--direction", "sideways"}, gql: relsQ, vars: o("filter", o("node", s("keystep"), "direction", s("sideways"))),
			tool: "graph_query", args: o("query", s(relsQ), "variables", o("filter", o("node", s("keystep"), "direction", s("sideways"))))},
		{name: "trace/unknown-direction", code: graph.EINVALID, field: "direction", want: []string{"sideways"},
			cli: []string{"query", traceQ, "--var", "from=keystep", "--var", "direction=sideways"}, gql: traceQ, vars: o("from", s("keystep"), "direction", s("sideways")),
			tool: "graph_trace", args: o("from", s("keystep"), "direction", s("sideways"))},

		// More of the same kinds, and conflicts.
		hintRow("hint/bad-usb_id-value", "hints", []string{"usb_id=zz:zz"}, "zz:zz"),
		hintRow("hint/value-nul", "hints", []string{"midi_client=JD\x00Xi"}),
		{name: "create/slug-taken", code: graph.ECONFLICT, field: "slug", want: []string{"identity:jdxi"},
			cli: []string{"identity", "create", "Another JD-Xi", "--slug", "jdxi"}, gql: createQ, vars: o("name", s("Another JD-Xi"), "slug", s("jdxi")),
			tool: "graph_identity", args: o("action", s("create"), "name", s("Another JD-Xi"), "slug", s("jdxi"))},
		{name: "relate/to-a-tag", code: graph.EINVALID, want: []string{"tag:role:synth"},
			cli: []string{"relate", "keystep", "controls", "tag:role:synth"}, gql: relateQ, vars: o("input", o("from", s("keystep"), "to", s("tag:role:synth"), "type", s("controls"))),
			tool: "graph_relate", args: o("op", s("add"), "from", s("keystep"), "to", s("tag:role:synth"), "type", s("controls"))},
		{name: "relate/declared-to-a-client", code: graph.EINVALID, want: []string{"client"},
			cli: []string{"relate", "jdxi", "controls", bitwig}, gql: relateQ, vars: o("input", o("from", s("jdxi"), "to", s(bitwig), "type", s("controls"))),
			tool: "graph_relate", args: o("op", s("add"), "from", s("jdxi"), "to", s(bitwig), "type", s("controls"))},
		{name: "relate/type-nul", code: graph.EINVALID, field: "type",
			cli: []string{"relate", "keystep", "con\x00trols", "jdxi", "--new-type"}, gql: relateQ, vars: o("input", o("from", s("keystep"), "to", s("jdxi"), "type", s("con\x00trols"), "newType", "true")),
			tool: "graph_relate", args: o("op", s("add"), "from", s("keystep"), "to", s("jdxi"), "type", s("con\x00trols"), "new_type", "true")},
		{name: "relate/same-tuple-other-attrs", code: graph.ECONFLICT, want: []string{fx.relID},
			cli: []string{"relate", "keystep", "cable", "jdxi", "--from-port", "MIDI OUT", "--to-port", "MIDI IN", "--attr", "kind=trs-midi"}, gql: relateQ,
			vars: o("input", o("from", s("keystep"), "to", s("jdxi"), "type", s("cable"), "fromPort", s("MIDI OUT"), "toPort", s("MIDI IN"), "attrs", o("kind", s("trs-midi")))),
			tool: "graph_relate", args: o("op", s("add"), "from", s("keystep"), "to", s("jdxi"), "type", s("cable"), "from_port", s("MIDI OUT"), "to_port", s("MIDI IN"), "attrs", o("kind", s("trs-midi")))},
		{name: "note-delete/not-a-note-id", code: graph.ENOTFOUND, want: []string{"jdxi"},
			cli: []string{"note", "delete", "jdxi"}, gql: noteDelQ, vars: o("id", s("jdxi")),
			tool: "graph_note", args: o("action", s("delete"), "note_id", s("jdxi"))},
		{name: "bind/identity-and-new", code: graph.EINVALID,
			cli: []string{"bind", "usb:3-1", "jdxi", "--new", "Nano"}, gql: bindQ, vars: o("ref", s("usb:3-1"), "identity", s("jdxi"), "newName", s("Nano")),
			tool: "graph_bind", args: o("ref", s("usb:3-1"), "identity", s("jdxi"), "new_name", s("Nano"))},
		{name: "changelog/bad-target", code: graph.ENOTFOUND, want: []string{"jdx1"},
			cli: []string{"changelog", "--target", "jdx1"}, gql: logQ, vars: o("filter", o("target", s("jdx1"))),
			tool: "graph_changelog", args: o("target", s("jdx1"))},
		{name: "note/to-a-tag", code: graph.EINVALID, want: []string{"tag:role:synth"},
			cli: []string{"note", "add", "tag:role:synth", "hello"}, gql: noteQ, vars: o("target", s("tag:role:synth"), "body", s("hello")),
			tool: "graph_note", args: o("target", s("tag:role:synth"), "body", s("hello"))},
		{name: "note-delete/message-nul", code: graph.EINVALID, field: "message",
			cli: []string{"note", "delete", fx.noteID, "-m", "a\x00b"}, gql: noteDelQ, vars: o("id", s(fx.noteID), "message", s("a\x00b")),
			tool: "graph_note", args: o("action", s("delete"), "note_id", s(fx.noteID), "why", s("a\x00b"))},
		{name: "rename/nul", code: graph.EINVALID, field: "name",
			cli: []string{"identity", "rename", "jdxi", "JD\x00Xi"}, gql: renameQ, vars: o("id", s("jdxi"), "name", s("JD\x00Xi")),
			tool: "graph_identity", args: o("action", s("rename"), "id", s("jdxi"), "name", s("JD\x00Xi"))},
		{name: "unbind/not-a-device", code: graph.EINVALID, want: []string{"jdxi"},
			cli: []string{"unbind", "identity:jdxi"}, gql: unbindQ, vars: o("ref", s("identity:jdxi")),
			tool: "graph_unbind", args: o("ref", s("identity:jdxi"))},

		hintRow("hint/empty-kind", "hints", []string{"=0582:01a9"}),
		relateRow("relate/attr-key-65-bytes", graph.EINVALID, "attrs", "controls", "", map[string]string{long(graph.MaxRelationAttrKey + 1): "v"}, false, "64"),
		relateRow("relate/attrs-over-4KiB", graph.EINVALID, "attrs", "controls", "", bigAttrs, false, "4096"),
		relateRow("relate/port-nul", graph.EINVALID, "from_port", "controls", "MIDI\x00OUT", nil, false),
		{name: "tag/remove-no-colon", code: graph.EINVALID, field: "tag", want: []string{"rolesynth"},
			cli: []string{"tag", "jdxi", "-rolesynth"}, gql: tagQ, vars: o("target", s("jdxi"), "remove", `["rolesynth"]`),
			tool: "graph_tag", args: o("target", s("jdxi"), "remove", `["rolesynth"]`)},

		{name: "find/malformed-tag-filter", code: graph.EINVALID, field: "tag", want: []string{"rolesynth"},
			cli: []string{"identities", "--tag", "rolesynth"}, gql: `query($tags: [String!]) { identities(filter: {tags: $tags}) { totalCount } }`, vars: o("tags", `["rolesynth"]`),
			tool: "graph_find", args: o("tags", `["rolesynth"]`)},

		// Prune: a before in the future cuts nothing, anywhere; MCP has no prune at all.
		{name: "prune/before-in-the-future", code: graph.EINVALID, field: "before", want: []string{"future"},
			cli: []string{"changelog", "prune", "--before", "2999-01-01"}, gql: pruneQ, vars: o("before", s("2999-01-01T00:00:00Z")),
			tool: "graph_query", args: o("query", s(pruneQ), "variables", o("before", s("2999-01-01T00:00:00Z"))), mcpRefuses: "read-only"},

		{name: "prune/before-not-a-time", code: graph.EINVALID, field: "before", want: []string{"soon"},
			cli: []string{"changelog", "prune", "--before", "soon"}, gql: pruneQ, vars: o("before", s("soon")),
			tool: "graph_query", args: o("query", s(pruneQ), "variables", o("before", s("soon"))), mcpRefuses: "read-only"},

		// Merge into itself.
		{name: "merge/into-itself", code: graph.EINVALID, want: []string{"identity:jdxi"},
			cli: []string{"identity", "merge", "jdxi", "jdxi"}, gql: mergeQ, vars: o("from", s("jdxi"), "into", s("jdxi")),
			tool: "graph_identity", args: o("action", s("merge"), "id", s("jdxi"), "into", s("jdxi"))},
	}
	return rows
}

func withCode(code string, row badInput) badInput {
	row.code = code
	return row
}

// badToken is the GraphQL client's bearer token, marked prune: so a prune with a bad
// before reaches the check of before, not the one of who may prune.
const badToken = "badinput-0123456789abcdef"

// badWorld is the database and the running server the rows are tried on.
type badWorld struct {
	t      *testing.T
	c      *cliEnv
	rig    *testRig
	fileDB string // the CLI opens this file itself
	srvDB  string // a server holds this one
	srv    *child
	sock   string
	gqlURL string
	client *remote.Client
	mcpID  int
}

// cli runs the CLI on db in this process — the code the binary's main runs, argv and
// all, so a NUL (which no exec can pass) reaches it too. With a server holding db it goes
// through the server's socket, as the binary does (the file itself is locked).
func (w *badWorld) cli(db string, args ...string) (string, string, int) {
	w.t.Helper()
	return w.c.run(append(append([]string{}, args...), append([]string{"--db", db}, w.rig.flags()...)...)...)
}

// snapshot is the changelog head (seq and hash) and the full export of the database an
// interface writes to.
func (w *badWorld) snapshot(i via) (string, []byte) {
	w.t.Helper()
	ctx := context.Background()
	type reader interface {
		FindEvents(context.Context, graph.EventFilter) ([]*graph.Event, string, error)
		Export(context.Context, io.Writer) error
	}
	var r reader
	if i == viaFile {
		st, err := store.Open(w.fileDB, store.Options{Timeout: 5 * time.Second, ReadOnly: true})
		if err != nil {
			w.t.Fatalf("open %s: %v", w.fileDB, err)
		}
		defer st.Close()
		r = st
	} else {
		r = w.client
	}
	evs, _, err := r.FindEvents(ctx, graph.EventFilter{First: 1})
	if err != nil {
		w.t.Fatalf("%s: read the changelog head: %v", viaNames[i], err)
	}
	head := "empty"
	if len(evs) > 0 {
		head = fmt.Sprintf("%d %s", evs[0].Seq, evs[0].Hash)
	}
	var buf bytes.Buffer
	if err := r.Export(ctx, &buf); err != nil {
		w.t.Fatalf("%s: export: %v", viaNames[i], err)
	}
	// The header line says when the export was made; the records follow it.
	dump := buf.Bytes()
	if k := bytes.IndexByte(dump, '\n'); k >= 0 && bytes.Contains(dump[:k], []byte(`"type":"header"`)) {
		dump = dump[k+1:]
	}
	return head, dump
}

// try runs row on interface i.
func (w *badWorld) try(i via, row badInput) outcome {
	w.t.Helper()
	switch i {
	case viaFile, viaSocket:
		db := w.fileDB
		if i == viaSocket {
			db = w.srvDB
		}
		out, errs, code := w.cli(db, row.cli...)
		o := outcome{failed: code != 0, msg: strings.TrimRight(errs, "\n"), code: "exit " + strconv.Itoa(code), raw: errs + out}
		return o
	case viaGraphQL:
		body := `{"query":` + rawJSON(row.gql)
		if row.vars != "" {
			body += `,"variables":` + row.vars
		}
		body += "}"
		req, err := http.NewRequest(http.MethodPost, w.gqlURL, strings.NewReader(body))
		if err != nil {
			w.t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+badToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.t.Fatalf("POST /graphql: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		o := outcome{raw: resp.Status + " " + string(b)}
		if err := json.Unmarshal(b, &r); err != nil {
			o.failed, o.msg = true, "(not JSON) "+string(b)
			return o
		}
		if len(r.Errors) > 0 {
			o.failed, o.msg = true, r.Errors[0].Message
			o.code, _ = r.Errors[0].Extensions["code"].(string)
			o.field, _ = r.Errors[0].Extensions["field"].(string)
		}
		return o
	case viaMCP:
		w.mcpID++
		id := w.mcpID
		w.srv.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":` + rawJSON(row.tool) + `,"arguments":` + row.args + `}}`)
		m := w.srv.reply(id)
		raw, _ := json.Marshal(m)
		o := outcome{raw: string(raw)}
		if e, ok := m["error"].(map[string]any); ok {
			o.failed, o.code = true, fmt.Sprintf("rpc %v", e["code"])
			o.msg, _ = e["message"].(string)
			return o
		}
		res, _ := m["result"].(map[string]any)
		if res["isError"] == true {
			o.failed, o.code = true, "isError"
			if content, _ := res["content"].([]any); len(content) > 0 {
				c0, _ := content[0].(map[string]any)
				o.msg, _ = c0["text"].(string)
			}
		}
		return o
	}
	panic("unknown interface")
}

// spellings are the ways the interfaces name a service field: the MCP tools call the
// message why, GraphQL spells arguments in camelCase, the CLI has --kebab-case flags, a
// transport names a JSON path (add[0], input.fromPort) whose last name is the field.
func spellings(field string) []string {
	out := []string{field, camelCase(field), strings.ReplaceAll(field, "_", "-")}
	return append(out, synonyms[field]...)
}

var synonyms = map[string][]string{
	"message": {"why"},
	"tag":     {"tags", "add", "remove"},
	"hints":   {"hint", "fingerprint", "value"}, // a hint's value, in GraphQL's {kind, value}
	"attrs":   {"attr", "kind", "note"},         // attrs.kind, attrs.note: the keys the rows use
}

func camelCase(f string) string {
	parts := strings.Split(f, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// problem is the part of a message that states what is wrong, without the advice: the
// text up to the first "; ", sentence end or closing parenthetical, with the interface's
// spelling of the field (why, fromPort, --from-port, a JSON path to it) made the service's.
func problem(field, msg string) string {
	p := strings.TrimPrefix(msg, "devgraph: ")
	p = strings.TrimPrefix(p, "query failed: ")
	p = toolPrefix.ReplaceAllString(p, "")
	if m := codeTag.FindStringIndex(p); m != nil { // graph_query: "message [CODE] advice"
		p = p[:m[0]]
	}
	if k := strings.Index(p, "; "); k >= 0 {
		p = p[:k]
	}
	if k := strings.Index(p, ", e.g. "); k >= 0 {
		p = p[:k]
	}
	if m := sentenceEnd.FindStringIndex(p); m != nil {
		p = p[:m[0]]
	}
	p = strings.TrimRight(trimParenthetical(p), ".")
	// "<what> is not valid UTF-8" and the like: a transport names the JSON path, the
	// service the field or a part of it (hints[0].value, attrs.note, fingerprint usb_id).
	if m := textProblem.FindStringSubmatch(p); m != nil && field != "" && mentions(m[1], field) {
		return field + " " + m[2]
	}
	p = jsonPath.ReplaceAllString(p, "$1")
	if field != "" {
		for _, sp := range spellings(field)[1:] {
			p = regexp.MustCompile(`(^|[^A-Za-z_-])-*`+regexp.QuoteMeta(sp)+`\b`).ReplaceAllString(p, "${1}"+field)
		}
	}
	// MCP puts the argument at fault first ("from: unknown identity …").
	p = argPrefix.ReplaceAllString(p, "")
	return strings.TrimFunc(p, unicode.IsSpace)
}

// mentions reports whether text names field in any spelling, alone or in a JSON path.
func mentions(text, field string) bool {
	for _, tok := range wordRe.FindAllString(text, -1) {
		if contains(spellings(field), tok) {
			return true
		}
	}
	return false
}

// trimParenthetical drops a closing "(…)" aside, nested parentheses and all.
func trimParenthetical(p string) string {
	if !strings.HasSuffix(p, ")") {
		return p
	}
	depth := 0
	for k := len(p) - 1; k >= 0; k-- {
		switch p[k] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return strings.TrimRight(p[:k], " ")
			}
		}
	}
	return p
}

var (
	sentenceEnd = regexp.MustCompile(`[.?!] [A-Z]`)
	textProblem = regexp.MustCompile(`^(.+?) (is not valid UTF-8|contains a NUL byte|is empty|is \d+ bytes)$`)
	wordRe      = regexp.MustCompile(`[A-Za-z0-9_]+`)
	codeTag     = regexp.MustCompile(` \[[A-Z_]+\]( |$)`)
	toolPrefix  = regexp.MustCompile(`^(graph|robot)_[a-z_]+: `)
	argPrefix   = regexp.MustCompile(`^[a-z_]+: `)
	// A JSON path a transport names, at the start: its last name is the field.
	jsonPath = regexp.MustCompile(`^(?:[A-Za-z0-9_]+(?:\[\d+\])*\.)*([A-Za-z0-9_]+)(?:\[\d+\])*`)
)

// TestBadInput_EveryInterface tries every row of the table on every interface.
func TestBadInput_EveryInterface(t *testing.T) {
	t.Parallel()
	start := time.Now()
	w := newBadWorld(t)
	rows := badInputs(w.fixture())
	w.startServer()

	type result struct {
		out  [nVias]outcome
		errs []string
	}
	results := make([]result, len(rows))
	tried := 0
	for i := via(0); i < nVias; i++ {
		head, dump := w.snapshot(i)
		for r, row := range rows {
			o := w.try(i, row)
			tried++
			results[r].out[i] = o
			bad := func(format string, args ...any) {
				results[r].errs = append(results[r].errs, viaNames[i]+": "+fmt.Sprintf(format, args...))
			}
			if i == viaMCP && row.mcpRefuses != "" {
				if !o.failed || !strings.Contains(o.msg, row.mcpRefuses) {
					bad("MCP has no such operation: want a refusal saying %q, got %s", row.mcpRefuses, clipMsg(o.raw))
				}
				if h, d := w.snapshot(i); h != head || !bytes.Equal(d, dump) {
					bad("wrote: changelog head %s → %s", head, h)
					head, dump = h, d
				}
				continue
			}
			if !o.failed {
				bad("accepted (%s)", clipMsg(o.raw))
				head, dump = w.snapshot(i) // the next row starts from what this one wrote
				continue
			}
			switch i {
			case viaFile, viaSocket:
				if o.code != "exit 1" && o.code != "exit 2" {
					bad("%s, want exit 1 or 2", o.code)
				}
				if o.msg == "" || strings.Contains(o.msg, "\n") {
					bad("stderr is not one line: %q", o.msg)
				}
			case viaGraphQL:
				if o.code != row.code {
					bad("extensions.code %q, want %q: %s", o.code, row.code, clipMsg(o.msg))
				}
			case viaMCP:
				if strings.Contains(o.msg, "\n") {
					bad("message is not one line: %q", o.msg)
				}
			}
			if row.field != "" {
				named := false
				for _, sp := range spellings(row.field) {
					named = named || strings.Contains(strings.ToLower(o.msg), strings.ToLower(sp)) || o.field == sp
				}
				if !named {
					bad("does not name the field %q: %s", row.field, clipMsg(o.msg))
				}
				if i == viaGraphQL && !mentions(o.field, row.field) {
					bad("extensions.field %q, want %q", o.field, camelCase(row.field))
				}
			}
			for _, want := range row.want {
				if !strings.Contains(o.msg, want) {
					bad("message lacks %q: %s", want, clipMsg(o.msg))
				}
			}
			if !utf8Valid(o.msg) {
				bad("message is not valid UTF-8: %q", o.msg)
			}
			h, d := w.snapshot(i)
			if h != head {
				bad("wrote: changelog head %s → %s", head, h)
			} else if !bytes.Equal(d, dump) {
				bad("wrote: the export differs (%d → %d bytes) with the changelog head unchanged", len(dump), len(d))
			}
			head, dump = h, d
		}
	}
	// The same problem on every interface.
	failedRows := 0
	for r, row := range rows {
		var first string
		for i := via(0); i < nVias; i++ {
			o := results[r].out[i]
			if !o.failed || i == viaMCP && row.mcpRefuses != "" {
				continue
			}
			p := problem(row.field, o.msg)
			if first == "" {
				first = p
				continue
			}
			if p != first {
				results[r].errs = append(results[r].errs, fmt.Sprintf("%s states another problem: %q, %s: %q", viaNames[i], p, viaNames[0], first))
			}
		}
		if len(results[r].errs) > 0 {
			failedRows++
			var sb strings.Builder
			for i := via(0); i < nVias; i++ {
				fmt.Fprintf(&sb, "\n    %-10s %s", viaNames[i], clipMsg(results[r].out[i].msg))
			}
			t.Errorf("%s:\n  %s\n  messages:%s", row.name, strings.Join(results[r].errs, "\n  "), sb.String())
		}
	}

	w.twoLineMessage()
	w.stop()
	t.Logf("bad-input table: %d rows × %d interfaces = %d tries, %d rows failing, in %s",
		len(rows), nVias, tried, failedRows, time.Since(start).Round(time.Millisecond))
	if len(rows) < 60 {
		t.Errorf("the table has %d rows; the issue asks for at least 60", len(rows))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func clipMsg(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func newBadWorld(t *testing.T) *badWorld {
	t.Helper()
	dir := t.TempDir()
	w := &badWorld{t: t, c: newCLI(t), rig: newTestRig(t), fileDB: filepath.Join(dir, "file.db"), srvDB: filepath.Join(dir, "server.db")}
	return w
}

// fixture builds the database every row refers to: two bound synths cabled together, a
// tag, a note and a spare identity; discovery has seen the rig, so reads write nothing.
func (w *badWorld) fixture() badFixture {
	t := w.t
	ok := func(args ...string) string {
		t.Helper()
		out, errs, code := w.cli(w.fileDB, args...)
		if code != 0 {
			t.Fatalf("fixture: devgraph %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	ok("devices")
	ok("bind", keystepRef, "--new", keystepName, "--slug", "keystep")
	ok("bind", jdxiRef, "--new", "Roland JD-Xi", "--slug", "jdxi")
	ok("identity", "create", "Spare Unit", "--slug", "spare")
	ok("tag", "jdxi", "+role:synth")
	var ch graph.RelationChange
	if err := json.Unmarshal([]byte(ok("relate", "keystep", "cable", "jdxi", "--from-port", "MIDI OUT", "--to-port", "MIDI IN", "--attr", "kind=midi-din", "--json")), &ch); err != nil || ch.Relation == nil {
		t.Fatalf("fixture relate: %v", err)
	}
	var n graph.Note
	if err := json.Unmarshal([]byte(ok("note", "add", "jdxi", "on the desk", "--json")), &n); err != nil {
		t.Fatalf("fixture note: %v", err)
	}
	b, err := os.ReadFile(w.fileDB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.srvDB, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return badFixture{relID: ch.Relation.ID, noteID: n.ID}
}

// startServer starts `devgraph serve --http` on the copy, with a simulated robot, and
// opens an MCP session on its stdio.
func (w *badWorld) startServer() {
	t := w.t
	env := procEnv(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("table "+badToken+" prune\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.srv = startServe(t, env, append([]string{"--db", w.srvDB, "--http", "127.0.0.1:0", "--token-file", tokens, "--stdio", "--poll", "0", "--sim-robot", "scout@1,1"}, w.rig.flags()...)...)
	w.sock = strings.TrimPrefix(w.srv.waitLine("socket: "), "socket: ")
	w.gqlURL = strings.TrimPrefix(w.srv.waitLine("GraphiQL: "), "GraphiQL: ")
	w.client = remote.NewClient(w.sock)
	t.Cleanup(func() { w.client.Close() })
	w.srv.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"badinput","version":"1"}}}`)
	if res, _ := w.srv.reply(0)["result"].(map[string]any); res == nil {
		t.Fatalf("MCP initialize failed:\n%s", w.srv.log())
	}
	w.srv.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Let discovery and the robot settle, so the rows start from a still database.
	if _, _, err := w.client.FindEvents(context.Background(), graph.EventFilter{First: 1}); err != nil {
		t.Fatalf("socket: %v", err)
	}
	if _, errs, code := w.cli(w.srvDB, "devices"); code != 0 {
		t.Fatalf("devices through the socket: %s", errs)
	}
}

// twoLineMessage is the positive check: a two-line message is valid and lands whole on
// every interface, through a running server too.
func (w *badWorld) twoLineMessage() {
	t := w.t
	const m = "line one\nline two"
	for i := via(0); i < nVias; i++ {
		tag := fmt.Sprintf("status:two-lines-%d", i)
		row := badInput{cli: []string{"tag", "jdxi", "+" + tag, "-m", m},
			gql:  `mutation($m: String) { tag(target: "jdxi", add: ["` + tag + `"], message: $m) { tags { id } } }`,
			vars: `{"m":` + rawJSON(m) + `}`, tool: "graph_tag", args: `{"target":"jdxi","add":["` + tag + `"],"why":` + rawJSON(m) + `}`}
		if o := w.try(i, row); o.failed {
			t.Errorf("%s: a two-line message was refused: %s", viaNames[i], clipMsg(o.raw))
			continue
		}
		var evs []*graph.Event
		var err error
		if i == viaFile {
			st, oerr := store.Open(w.fileDB, store.Options{Timeout: 5 * time.Second, ReadOnly: true})
			if oerr != nil {
				t.Fatal(oerr)
			}
			evs, _, err = st.FindEvents(context.Background(), graph.EventFilter{First: 1})
			st.Close()
		} else {
			evs, _, err = w.client.FindEvents(context.Background(), graph.EventFilter{First: 1})
		}
		if err != nil || len(evs) == 0 {
			t.Fatalf("%s: read the changelog: %v", viaNames[i], err)
		}
		if evs[0].Action != graph.ActTagAdd || evs[0].Message != m {
			t.Errorf("%s: the two-line message was stored as %q on %s", viaNames[i], evs[0].Message, evs[0].Action)
		}
	}
}

// stop ends the server and checks both chains.
func (w *badWorld) stop() {
	t := w.t
	w.srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := w.srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, w.srv.log())
	}
	for _, db := range []string{w.fileDB, w.srvDB} {
		if out, errs, code := w.cli(db, "changelog", "verify"); code != 0 || !strings.HasPrefix(out, "changelog ok") {
			t.Errorf("changelog verify %s: exit %d %s%s", filepath.Base(db), code, out, errs)
		}
	}
}
