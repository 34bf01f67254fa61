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

// maxActorBytes bounds an actor a socket caller names.
const maxActorBytes = 128

// ValidActor checks the form of an actor a socket caller names: cli:<user> or
// mcp:<client name> with a non-empty name, valid UTF-8 without control characters, at
// most 128 bytes. The other forms of the contract are the server's own (discovery:,
// robot:) or proven by a token (http:), so no socket caller may name them; CallerContext
// also holds cli: to the peer's own user.
func ValidActor(a string) error {
	bad := func(why string) error {
		return graph.FieldErrorf(graph.EINVALID, "actor", "actor %q %s; a socket caller acts as cli:<its own user> (leave the actor out) or mcp:<client name> (at most %d bytes)",
			shownActor(a), why, maxActorBytes)
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
	for _, p := range []string{"cli:", "mcp:"} {
		if name, ok := strings.CutPrefix(a, p); ok {
			if strings.TrimSpace(name) == "" {
				return bad("names nobody after " + p)
			}
			return nil
		}
	}
	for _, p := range []string{"http:", "discovery:", "robot:"} {
		if strings.HasPrefix(a, p) {
			return bad("is not accepted on the socket: " + p + " actors are recorded only by the server itself (an http: actor needs that token, sent over HTTP)")
		}
	}
	return bad("is not one of devgraph's actor forms")
}

// shownActor is a for an error message: valid UTF-8, at most 60 bytes.
func shownActor(a string) string {
	if len(a) > 60 {
		a = a[:60] + "…"
	}
	return strings.ToValidUTF8(a, "?")
}

// checkPeerActor holds a cli: actor to the socket peer's own user: another user's name
// would forge their entries in the audit trail. The peer's login name, its uid in decimal
// and a name that resolves to its uid are its own; when its uid has no login name (a
// container's arbitrary uid, where the CLI names itself from $USER) any name that is not
// another user's is too.
func checkPeerActor(ctx context.Context, a string) error {
	name, ok := strings.CutPrefix(a, "cli:")
	if !ok {
		return nil
	}
	uid, ok := ctx.Value(peerKey{}).(int)
	if !ok {
		uid = os.Getuid()
	}
	peer := peerActor(ctx)
	// On a fleet the store adds the host (cli:alice@studio-a); a caller naming it names
	// the same user.
	if who, _ := graph.SplitActorHost(a); who != a {
		a, name = who, strings.TrimPrefix(who, "cli:")
	}
	if a == peer || name == strconv.Itoa(uid) {
		return nil
	}
	if u, err := user.Lookup(name); err == nil {
		if u.Uid == strconv.Itoa(uid) {
			return nil
		}
	} else if _, err := user.LookupId(strconv.Itoa(uid)); err != nil {
		return nil
	}
	return graph.FieldErrorf(graph.EINVALID, "actor", "actor %q is not the socket peer's user: this connection is %s; leave the actor out to act as %s",
		shownActor(a), peer, peer)
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
	if uid == os.Getuid() {
		// Our own user, named as the CLI names itself (user.Current falls back to $USER
		// when the uid has no passwd entry), so its cli: actor matches.
		if u, err := user.Current(); err == nil && u.Username != "" {
			name = u.Username
		} else if env := os.Getenv("USER"); env != "" {
			name = env
		}
	} else if u, err := user.LookupId(name); err == nil && u.Username != "" {
		name = u.Username
	}
	userNames.Store(uid, name)
	return name
}

// CallerContext reads the Caller line that starts r's body and returns r's context
// carrying the caller's actor, request id and message; r.Body is left holding the rest
// of the body (the method's arguments). Without an actor the caller is cli:<the peer's
// user>. A caller line that is not valid text (CheckJSONText), not a Caller, or names an
// actor other than cli:<the peer's user> or mcp:<client name> is an EINVALID error
// (answer 400). A cli: caller, the same OS user, may prune the changelog. Other endpoints
// served on the same socket (GraphQL for `devgraph query`) use it too.
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
		if err := checkPeerActor(ctx, c.Actor); err != nil {
			return nil, err
		}
		actor = c.Actor
	}
	ctx = graph.WithActor(ctx, actor)
	// Only the same OS user reaches the socket, and it may open the file itself: as
	// cli:<user> (devgraph changelog prune) it may prune. MCP has no prune, so an mcp:
	// actor may not (the changelog would say an MCP client pruned it).
	if strings.HasPrefix(actor, "cli:") {
		ctx = graph.WithPrunePermission(ctx)
	}
	if c.RequestID != "" {
		ctx = graph.WithRequestID(ctx, c.RequestID)
	}
	if c.Message != "" {
		ctx = graph.WithMessage(ctx, c.Message)
	}
	return ctx, nil
}
