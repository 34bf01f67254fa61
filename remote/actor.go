package remote

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// maxActorBytes bounds an actor a caller names.
const maxActorBytes = 128

// actorPrefixes are the actor forms of the contract: cli:<os user>, mcp:<client name>,
// http:<token name>, discovery:<source>, robot:<id>.
var actorPrefixes = []string{"cli:", "mcp:", "http:", "discovery:", "robot:"}

// ValidActor checks an actor a socket caller names: one of the contract's forms with a
// non-empty name, valid UTF-8 without control characters, at most 128 bytes.
func ValidActor(a string) error {
	bad := func(why string) error {
		shown := a
		if len(shown) > 60 {
			shown = shown[:60] + "…"
		}
		return graph.FieldErrorf(graph.EINVALID, "actor", "actor %q %s; send cli:<user>, mcp:<client>, http:<token name>, discovery:<source> or robot:<id> (at most %d bytes), or name none to act as cli:<your user>",
			strings.ToValidUTF8(shown, "?"), why, maxActorBytes)
	}
	switch {
	case a == "":
		return bad("is empty")
	case len(a) > maxActorBytes:
		return bad("is longer than 128 bytes")
	case !utf8.ValidString(a):
		return bad("is not valid UTF-8")
	}
	for _, r := range a {
		if unicode.IsControl(r) {
			return bad("holds a control character")
		}
	}
	for _, p := range actorPrefixes {
		if name, ok := strings.CutPrefix(a, p); ok {
			if strings.TrimSpace(name) == "" {
				return bad("names nobody after " + p)
			}
			return nil
		}
	}
	return bad("is not one of devgraph's actor forms")
}

type peerKey struct{}

// ConnContext records the uid of the socket peer (SO_PEERCRED) in the connection's
// context; set it as the http.Server's ConnContext so a caller that names no actor is
// recorded as cli:<its user>.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if uc, ok := c.(*net.UnixConn); ok {
		if uid, err := peerUID(uc); err == nil {
			return context.WithValue(ctx, peerKey{}, uid)
		}
	}
	return ctx
}

// peerActor is cli:<user name of the peer's uid>. Without ConnContext the peer is our own
// user: Listen admits no other.
func peerActor(ctx context.Context) string {
	uid, ok := ctx.Value(peerKey{}).(int)
	if !ok {
		uid = os.Getuid()
	}
	return "cli:" + userName(uid)
}

var userNames sync.Map // uid → name

// userName is the login name of uid, else the uid in decimal.
func userName(uid int) string {
	if n, ok := userNames.Load(uid); ok {
		return n.(string)
	}
	name := strconv.Itoa(uid)
	if u, err := user.LookupId(name); err == nil && u.Username != "" {
		name = u.Username
	}
	userNames.Store(uid, name)
	return name
}

// CallerContext reads the Caller line that starts r's body and returns r's context
// carrying the caller's actor, request id and message; r.Body is left holding the rest
// of the body (the method's arguments). Without an actor the caller is cli:<the peer's
// user>. A caller line that is not valid text (CheckJSONText), not a Caller, or names an
// actor that is not one of the contract's forms is an EINVALID error (answer 400). Other
// endpoints served on the same socket (GraphQL for `devgraph query`) use it too.
func CallerContext(r *http.Request) (context.Context, error) {
	c, err := readCaller(r)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	actor := peerActor(ctx)
	if c.Actor != "" {
		if err := ValidActor(c.Actor); err != nil {
			return nil, err
		}
		actor = c.Actor
	}
	ctx = graph.WithActor(ctx, actor)
	if c.RequestID != "" {
		ctx = graph.WithRequestID(ctx, c.RequestID)
	}
	if c.Message != "" {
		ctx = graph.WithMessage(ctx, c.Message)
	}
	return ctx, nil
}
