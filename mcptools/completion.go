package mcptools

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
)

// maxCompletions is what completion/complete may send at once (the spec's cap).
const maxCompletions = 100

// completionTimeout bounds one completion: it answers a keystroke, so it reads what the
// store has at hand and gives up rather than keep a client waiting.
const completionTimeout = 500 * time.Millisecond

// completer answers completion/complete for the resource templates' ids and for every
// prompt argument (mcp-go's ResourceCompletionProvider and PromptCompletionProvider).
// Values are offered by prefix, case-insensitively, as typed: an id typed without its
// kind prefix ("rol") is completed as the ids it can stand for ("identity:roland-jd-xi").
type completer struct{ s *Server }

var (
	_ server.ResourceCompletionProvider = completer{}
	_ server.PromptCompletionProvider   = completer{}
)

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	switch {
	case strings.HasPrefix(uri, nodePrefix):
		return completion(arg.Value, c.nodeIDs(ctx, arg.Value)), nil
	case strings.HasPrefix(uri, robotPrefix):
		return completion(arg.Value, c.robotNames(ctx)), nil
	}
	return completion(arg.Value, nil), nil
}

func (c completer) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	var values []string
	switch prompt + "." + arg.Name {
	case PromptDescribeSetup + ".focus":
		values = c.tagsInUse(ctx)
	case PromptBindNewDevice + ".ref":
		for _, d := range c.unbound(ctx) {
			values = append(values, d.Ref)
		}
	case PromptBindNewDevice + ".name":
		// What the sources call the unbound devices: the name a new identity usually takes.
		for _, d := range c.unbound(ctx) {
			values = append(values, d.Name)
		}
	case PromptReviewChanges + ".since":
		values = []string{"1h", "24h", "7d", "30d"}
	case PromptReviewChanges + ".actor":
		values = c.actors(ctx)
	case PromptRobotMission + ".robot":
		values = c.robotNames(ctx)
	case PromptRobotMission + ".object":
		// Objects are known only once a robot has looked (robot_detect, which moves a sensor
		// and is open-world): nothing is offered before that, and completing never senses.
	}
	return completion(arg.Value, values), nil
}

// completion keeps the values that start with typed (case-insensitively; an id typed
// without its kind prefix matches after the prefix too), sorted, without repeats, at most
// maxCompletions of them, with the total.
func completion(typed string, values []string) *mcp.Completion {
	t := strings.ToLower(typed)
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		lv := strings.ToLower(v)
		_, local, hasKind := strings.Cut(lv, ":")
		if strings.HasPrefix(lv, t) || (hasKind && !strings.Contains(t, ":") && strings.HasPrefix(local, t)) {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	c := &mcp.Completion{Values: out, Total: len(out)}
	if len(out) > maxCompletions {
		c.Values, c.HasMore = out[:maxCompletions], true
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return c
}

// nodeIDs are the ids a node URI may name that start with typed: identities (read from
// the store by slug, from where the prefix sorts), device refs, tags in use and robots.
func (c completer) nodeIDs(ctx context.Context, typed string) []string {
	var out []string
	slug := strings.ToLower(typed)
	if k, local, ok := strings.Cut(slug, ":"); ok {
		if k != "identity" {
			slug = "\xff" // not an identity id: skip them
		} else {
			slug = local
		}
	}
	if slug != "\xff" {
		ids, _, _, err := c.s.svc.FindIdentities(ctx, graph.IdentityFilter{First: maxCompletions + 1, After: slugBefore(slug)})
		if err == nil {
			for _, id := range ids {
				if strings.HasPrefix(strings.TrimPrefix(id.ID, "identity:"), slug) {
					out = append(out, id.ID)
				}
			}
		}
	}
	if devs, _, _, err := c.s.opts.Devices.FindDevices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize}); err == nil {
		for _, d := range devs {
			out = append(out, d.Ref)
		}
	}
	for _, t := range c.tagsInUse(ctx) { // a tag's node lists what carries it
		out = append(out, "tag:"+t)
	}
	return append(out, c.robotRefs(ctx)...)
}

// slugBefore is a cursor that sorts just before every slug starting with prefix (the
// store pages identities after the cursor's slug, which it skips when it exists).
func slugBefore(prefix string) string {
	if prefix == "" {
		return ""
	}
	last := prefix[len(prefix)-1]
	if last == 0 {
		return prefix[:len(prefix)-1]
	}
	return prefix[:len(prefix)-1] + string(rune(last-1)) + "\x7f"
}

func (c completer) robotRefs(ctx context.Context) []string {
	robots, err := c.s.svc.Robots(ctx)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(robots))
	for _, r := range robots {
		out = append(out, r.Ref)
	}
	return out
}

// robotNames are the names a robot URI or argument takes: its ref and its identity.
func (c completer) robotNames(ctx context.Context) []string {
	robots, err := c.s.svc.Robots(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range robots {
		out = append(out, r.Ref)
		if r.IdentityID != "" {
			out = append(out, r.IdentityID)
		}
	}
	return out
}

func (c completer) tagsInUse(ctx context.Context) []string {
	tags, err := c.s.svc.FindTags(ctx, graph.TagFilter{InUse: true})
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		out = append(out, t.Tag)
	}
	return out
}

func (c completer) unbound(ctx context.Context) []*graph.DeviceView {
	devs, err := c.s.svc.Unbound(ctx)
	if err != nil {
		return nil
	}
	return devs
}

// actors are the actors of the newest changes, and a glob per kind of actor.
func (c completer) actors(ctx context.Context) []string {
	out := []string{"cli:*", "mcp:*", "http:*", "discovery:*", "robot:*"}
	evs, _, err := c.s.svc.FindEvents(ctx, graph.EventFilter{First: graph.MaxPageSize})
	if err != nil {
		return out
	}
	for _, ev := range evs {
		out = append(out, ev.Actor)
	}
	return out
}
