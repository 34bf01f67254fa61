package store_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// TestIdentityData_Text: identity data is JSON stored as given, so "\ud800" (a lone
// surrogate escape) and "\u0000" inside it were kept on the CLI opening the file, while
// the socket, GraphQL and MCP refuse them in their JSON: invalid text is refused at the
// store, with the data's path named, on create and update alike.
func TestIdentityData_Text(t *testing.T) {
	db := openFile(t, filepath.Join(t.TempDir(), "d.db"), store.Options{})
	defer db.Close()
	ctx := ctxActor("cli:data")
	for _, c := range []struct{ data, field, want string }{
		{`{"a":"\ud800"}`, "data.a", "data.a is not valid UTF-8"},
		{`{"room":{"desk":["x","\u0000"]}}`, "data.room.desk[1]", "data.room.desk[1] contains a NUL byte"},
		{`{"\udfff":1}`, "data", "is not valid UTF-8"},
	} {
		raw := json.RawMessage(c.data)
		_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Bad Data", Data: raw})
		var ge *graph.Error
		if err == nil || !strings.Contains(err.Error(), c.want) || graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("create with data %s: %v; want %q", c.data, err, c.want)
		} else if ge, _ = err.(*graph.Error); ge == nil || !strings.HasPrefix(ge.Field, c.field) {
			t.Errorf("create with data %s: field %+v; want %s", c.data, ge, c.field)
		}
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Good", Slug: "good"}); err != nil && graph.ErrorCode(err) != graph.ECONFLICT {
			t.Fatal(err)
		}
		if _, err := db.UpdateIdentity(ctx, "identity:good", graph.IdentityUpdate{Data: &raw}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("update with data %s: %v; want %q", c.data, err, c.want)
		}
	}
	ok := json.RawMessage(`{"a":"\u00e9 \ud83d\ude00"}`)
	if _, err := db.UpdateIdentity(ctx, "identity:good", graph.IdentityUpdate{Data: &ok}); err != nil {
		t.Errorf("escapes that are text: %v", err)
	}
}
