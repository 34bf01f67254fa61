package http

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/devgraph/devgraph/graph"
)

// Token is one line of a token file: the name a bearer token acts as (http:<name>) and
// what it may do beyond reading and ordinary writes.
type Token struct {
	Name string
	// Prune lets the token prune the changelog (the line ends in the word prune).
	Prune bool
}

// LoadTokens reads a token file into a map from bearer token to Token: one "name token"
// or "name token prune" per line; blank lines and lines starting with # are skipped.
// Names become actors (http:<name>); a token marked prune may also prune the changelog.
func LoadTokens(path string) (map[string]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "token file %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	return ParseTokens(f, path)
}

// ParseTokens reads LoadTokens' format from r; where names the source in errors.
func ParseTokens(r io.Reader, where string) (map[string]Token, error) {
	tokens := map[string]Token{}
	names := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // the byte order mark some editors write
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || len(fields) > 3 {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: want \"name token\" or \"name token prune\", got %d words", where, n, len(fields))
		}
		name, tok := fields[0], fields[1]
		if len(fields) == 3 && fields[2] != "prune" {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: the third word may only be prune (the token may prune the changelog), not %q", where, n, truncate(fields[2], 40))
		}
		if err := graph.ValidateText("token name", name, 1, 64); err != nil {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: %s", where, n, graph.ErrorMessage(err))
		}
		if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsGraphic(r) }) {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token name %q holds an invisible or control character; the name is recorded as the actor http:<name>, so use plain characters", where, n, name)
		}
		if len(tok) < 16 {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token for %q is %d characters; use at least 16 random characters (e.g. openssl rand -hex 24)", where, n, name, len(tok))
		}
		if names[name] {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token name %q appears twice", where, n, name)
		}
		if _, dup := tokens[tok]; dup {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token for %q is the same as another name's", where, n, name)
		}
		names[name] = true
		tokens[tok] = Token{Name: name, Prune: len(fields) == 3}
	}
	if err := sc.Err(); err != nil {
		return nil, graph.Errorf(graph.EINVALID, "%s: %v", where, err)
	}
	if len(tokens) == 0 {
		return nil, graph.Errorf(graph.EINVALID, "%s has no tokens; add lines like \"ci 3f9c…\" (name, then token)", where)
	}
	return tokens, nil
}
