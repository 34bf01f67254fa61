package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Limits runs the CLI opening the file itself against the one validation layer:
// a bad -m (defect 1: a raw byte went into the hash chain, 2 KB passed where GraphQL and
// MCP cap at 1,024) and an oversized tag call (defect 4: 50,000 tags held every writer for
// seconds) are refused with one line naming the field, and the file is left as it was.
func TestCLI_Limits(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	path := filepath.Join(t.TempDir(), "limits.db")
	db := "--db=" + path
	c.ok("identity", "create", "Roland JD-Xi", db)
	c.ok("tag", "roland-jd-xi", "+role:synth", db, "-m", "a fine reason")
	// in makes the CLI report failures to the subtest running it.
	in := func(t *testing.T) *cliEnv { cc := *c; cc.t = t; return &cc }
	unchanged := func(t *testing.T, args ...string) {
		t.Helper()
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _ = c.run(args...)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("devgraph %.80s…: the database file changed", strings.Join(args, " "))
		}
	}

	for name, tc := range map[string]struct{ msg, want string }{
		"RawByte": {"\xff", "message is not valid UTF-8"},
		"NUL":     {"a\x00b", "message contains a NUL byte"},
		"2KB":     {strings.Repeat("m", 2048), "message is 2048 bytes; the limit is 1024"},
	} {
		t.Run("Message"+name, func(t *testing.T) {
			for _, args := range [][]string{
				{"tag", "roland-jd-xi", "+a:b", "-m", tc.msg, db},
				{"note", "add", "roland-jd-xi", "hello", "-m", tc.msg, db},
				{"identity", "rename", "roland-jd-xi", "JD-Xi", "--message", tc.msg, db},
			} {
				in(t).fail(1, tc.want, args...)
				unchanged(t, args...)
			}
		})
	}
	t.Run("Message1024", func(t *testing.T) {
		in(t).ok("tag", "roland-jd-xi", "+a:b", "-m", strings.Repeat("é", 512), db)
		in(t).ok("tag", "roland-jd-xi", "-a:b", db)
	})

	tags := func(sign string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%sbulk:t%05d", sign, i)
		}
		return out
	}
	t.Run("Tags50000", func(t *testing.T) {
		args := append(append([]string{"tag", "roland-jd-xi"}, tags("+", 50000)...), db)
		in(t).fail(1, "add has 50000 tags; the limit is 32 per call", args...)
		unchanged(t, args...)
	})
	t.Run("Tags33Removed", func(t *testing.T) {
		args := append(append([]string{"tag", "roland-jd-xi"}, tags("-", 33)...), db)
		in(t).fail(1, "remove has 33 tags; the limit is 32 per call", args...)
		unchanged(t, args...)
	})
	t.Run("Tags32Add32Remove", func(t *testing.T) {
		in(t).ok(append(append([]string{"tag", "roland-jd-xi"}, tags("+", 32)...), db)...)
		args := append(append(append([]string{"tag", "roland-jd-xi", "--json"}, tags("-", 32)...), "+role:keyboard"), db)
		if out := in(t).ok(args...); !strings.Contains(out, `"role:keyboard"`) || strings.Contains(out, "bulk:") {
			t.Fatalf("tags after swapping 32: %s", out)
		}
	})
	t.Run("TagsDuplicated", func(t *testing.T) {
		var args []string
		for i := 0; i < 32; i++ {
			args = append(args, []string{"+status:loaned", "+Status: Loaned", "+STATUS:loaned"}[i%3])
		}
		out := in(t).ok(append(append([]string{"tag", "roland-jd-xi", "--json"}, args...), db)...)
		if n := strings.Count(out, "status:loaned"); n != 1 {
			t.Fatalf("status:loaned appears %d times: %s", n, out)
		}
		if v := in(t).ok("changelog", "verify", db); !strings.HasPrefix(v, "changelog ok") {
			t.Fatalf("verify: %s", v)
		}
	})
}

// TestCLI_QueryVarsText: `query --vars-file` refuses, naming the file, variables whose
// JSON text decoding would garble (a lone surrogate escape, a byte that is not UTF-8,
// \u0000), as the HTTP endpoint refuses them, instead of sending U+FFFD in their place.
func TestCLI_QueryVarsText(t *testing.T) {
	c := newCLI(t)
	db := "--db=" + filepath.Join(t.TempDir(), "v.db")
	c.ok("identity", "create", "X", db)
	doc := `mutation($n: String!) { createIdentity(name: $n) { id } }`
	for i, vars := range []string{`{"n":"Syn\ud800th"}`, "{\"n\":\"Syn\xffth\"}", `{"n":"Syn\u0000th"}`} {
		f := filepath.Join(t.TempDir(), fmt.Sprintf("vars%d.json", i))
		if err := os.WriteFile(f, []byte(vars), 0o600); err != nil {
			t.Fatal(err)
		}
		c.fail(1, "vars-file", "query", doc, "--vars-file", f, db)
	}
	if out := c.ok("identities", "--json", db); strings.Contains(out, "syn") {
		t.Fatalf("an identity was created: %s", out)
	}
}
