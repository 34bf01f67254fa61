package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

func newCompletionCmd(c *common) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "print a shell completion script: completion bash|zsh|fish",
		Long: "print a shell completion script: completion bash|zsh|fish. It completes verbs and flags, " +
			"and identity slugs, device refs, robot names and tags from the database (through a running " +
			"server, else a read-only look at the file that gives up after 100 ms; a TAB never takes the lock " +
			"and never creates a file). The bash script works with or without the bash-completion package.",
		Example: `  source <(devgraph completion bash)
  devgraph completion zsh > "${fpath[1]}/_devgraph"
  devgraph completion fish > ~/.config/fish/completions/devgraph.fish`,
		Args:      nargs(1, 1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompletion(cmd.Context(), cmd.Root(), args[0], c.e.stdout)
		},
	}
}

func runCompletion(ctx context.Context, root *cobra.Command, shell string, out io.Writer) error {
	switch shell {
	case "bash":
		var b bytes.Buffer
		if err := root.GenBashCompletionV2(&b, true); err != nil {
			return err
		}
		script := strings.Replace(b.String(), bashRegister, bashColonRegister, 1)
		_, err := io.WriteString(out, bashPrelude+script)
		return err
	case "zsh":
		return root.GenZshCompletion(out)
	case "fish":
		return root.GenFishCompletion(out, true)
	}
	return usagef("completion: unknown shell %q; want bash, zsh or fish", shell)
}

// bashPrelude lets cobra's bash script run without the bash-completion package: a
// minimal _get_comp_words_by_ref that splits the line at blanks only, as
// bash-completion's `-n =:` does, so a ref such as usb:3-3.2 stays one word.
const bashPrelude = `# bash completion for devgraph: source <(devgraph completion bash)
# Works with or without the bash-completion package.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref()
{
    local __line="${COMP_LINE:0:COMP_POINT}"
    local -a __ws
    read -ra __ws <<< "$__line"
    if [[ -z $__line || $__line == *[[:space:]] ]]; then
        __ws+=("")
    fi
    while [[ $# -gt 0 ]]; do
        case $1 in
            -n) shift ;;
            cur) cur=${__ws[${#__ws[@]}-1]} ;;
            prev) prev=${__ws[${#__ws[@]}-2]} ;;
            words) words=("${__ws[@]}") ;;
            cword) cword=$((${#__ws[@]}-1)) ;;
        esac
        shift
    done
}
fi

`

// bashRegister is how cobra's script registers its function; bashColonRegister wraps it.
const bashRegister = `if [[ $(type -t compopt) = "builtin" ]]; then
    complete -o default -F __start_devgraph devgraph
else
    complete -o default -o nospace -F __start_devgraph devgraph
fi`

// bashColonRegister: bash splits words at ':' (COMP_WORDBREAKS), so a completion of
// "usb:3" must drop the "usb:" bash already holds, or the line reads usb:usb:3-3.2.
const bashColonRegister = `__devgraph_start_colons()
{
    __start_devgraph "$@"
    local line="${COMP_LINE:0:COMP_POINT}"
    local word="${line##*[[:space:]]}"
    if [[ $word == *:* && $COMP_WORDBREAKS == *:* ]]; then
        local prefix="${word%"${word##*:}"}" i
        for i in "${!COMPREPLY[@]}"; do
            COMPREPLY[i]=${COMPREPLY[i]#"$prefix"}
        done
    fi
}

if [[ $(type -t compopt) = "builtin" ]]; then
    complete -o default -F __devgraph_start_colons devgraph
else
    complete -o default -o nospace -F __devgraph_start_colons devgraph
fi`

// What an argument or flag value completes to.
const (
	compIdentity = "identity" // identity slugs
	compDevice   = "device"   // device refs
	compTarget   = "target"   // identities and devices (tags, notes)
	compNode     = "node"     // identities, devices and robots (relations, show)
	compRobot    = "robot"    // robot names
	compRelType  = "type"     // relation types
	compTag      = "tag"      // the tag vocabulary
)

// registerCompletions wires the dynamic completions into the tree; only a completion
// request (`devgraph __complete …`, what the scripts run at a TAB) needs them.
func registerCompletions(root *cobra.Command, c *common) {
	args := map[string][]string{
		"bind":             {compDevice, compIdentity},
		"unbind":           {compDevice},
		"show":             {compNode},
		"identity rename":  {compIdentity},
		"identity update":  {compIdentity},
		"identity delete":  {compIdentity},
		"identity merge":   {compIdentity, compIdentity},
		"identity restore": {compIdentity},
		"hint add":         {compIdentity},
		"hint remove":      {compIdentity},
		"note add":         {compTarget},
		"notes":            {compTarget},
		"relate":           {compNode, compRelType, compNode},
		"unrelate":         {compNode, compRelType, compNode},
		"relations":        {compNode},
		"trace":            {compNode},
		"path":             {compNode, compNode},
		"robot status":     {compRobot},
		"robot stop":       {compRobot},
		"robot arm":        {compRobot},
		"robot disarm":     {compRobot},
		"robot parameters": {compRobot},
	}
	fixed := map[string][]string{
		"direction": {"out", "in", "both"},
		"format":    {"jsonl", "dot", "mermaid"},
		"kind":      {"info", "success", "warning", "danger"},
		"output":    {"json", "wide"},
		"source":    {"usb", "alsa", "pipewire", "robot"},
		"log-level": {"debug", "info", "warn", "error"},
	}
	dynamic := map[string]string{"tag": compTag, "type": compRelType, "target": compNode, "around": compNode}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		name := verbName(cmd)
		if kinds, ok := args[name]; ok {
			cmd.ValidArgsFunction = c.completeArgs(kinds)
		}
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if vals, ok := fixed[f.Name]; ok {
				vals := vals
				_ = cmd.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return vals, cobra.ShellCompDirectiveNoFileComp
				})
			}
			if kind, ok := dynamic[f.Name]; ok {
				kind := kind
				_ = cmd.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
					return c.values(cmd.Context(), kind, toComplete), cobra.ShellCompDirectiveNoFileComp
				})
			}
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if tag, _, err := root.Find([]string{"tag"}); err == nil {
		tag.ValidArgsFunction = c.completeTag
	}
	if nav, _, err := root.Find([]string{"robot", "navigate"}); err == nil {
		nav.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if valueFlagLast(cmd, args) {
				return nil, cobra.ShellCompDirectiveDefault
			}
			pos, _, _ := ownArgs(cmd, args)
			if len(pos) == 0 && !strings.HasPrefix(toComplete, "-") {
				return c.values(cmd.Context(), compRobot, toComplete), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// completeHelp completes `help VERB [SUB]` with the verbs and a group's subcommands.
func completeHelp(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	parent := cmd.Root()
	if len(args) > 0 {
		p, rest, err := parent.Find(args)
		if err != nil || len(rest) > 0 || p == parent {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		parent = p
	}
	var out []string
	for _, sub := range parent.Commands() {
		if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
			out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeArgs completes the n-th positional argument with the values of kinds[n].
func (c *common) completeArgs(kinds []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= len(kinds) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.values(cmd.Context(), kinds[len(args)], toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTag completes tag's arguments (it reads its own): the target first, then
// after + the tag vocabulary and after - the tags the target holds.
func (c *common) completeTag(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if valueFlagLast(cmd, args) {
		return nil, cobra.ShellCompDirectiveDefault // --db PATH: files
	}
	pos, _, _ := tagArgsLoose(cmd, args)
	ctx := cmd.Context()
	switch {
	case len(pos) == 0 && !strings.HasPrefix(toComplete, "-"):
		return c.values(ctx, compTarget, toComplete), cobra.ShellCompDirectiveNoFileComp
	case len(pos) == 0 || strings.HasPrefix(toComplete, "--"):
		return nil, cobra.ShellCompDirectiveNoFileComp
	case strings.HasPrefix(toComplete, "+"):
		return prefixed("+", c.values(ctx, compTag, toComplete[1:])), cobra.ShellCompDirectiveNoFileComp
	case strings.HasPrefix(toComplete, "-"):
		return prefixed("-", c.heldTags(ctx, pos[0], toComplete[1:])), cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"+", "-"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// tagArgsLoose reads what tag's arguments hold so far, for completion: flags set the
// options (--db), the rest are positionals; nothing is refused.
func tagArgsLoose(cmd *cobra.Command, args []string) ([]string, bool, error) {
	fs := cmd.Flags()
	cmd.InheritedFlags()
	var rest []string
	for _, a := range args {
		if isFlagArg(a) && !strings.HasPrefix(a, "--") && lookupFlag(fs, a) == nil {
			continue // a tag removal
		}
		rest = append(rest, a)
	}
	return ownArgs(cmd, rest)
}

// valueFlagLast reports whether the last argument is a flag waiting for its value
// (`--db` before the TAB), in a verb that reads its own arguments.
func valueFlagLast(cmd *cobra.Command, args []string) bool {
	if len(args) == 0 {
		return false
	}
	a := args[len(args)-1]
	if !isFlagArg(a) || strings.Contains(a, "=") {
		return false
	}
	cmd.InheritedFlags()
	f := lookupFlag(cmd.Flags(), a)
	return f != nil && f.NoOptDefVal == ""
}

func prefixed(p string, vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = p + v
	}
	return out
}

// compSource is what completion reads values from: the running server's client or the
// file opened read-only.
type compSource interface {
	FindIdentities(ctx context.Context, f graph.IdentityFilter) ([]*graph.Identity, int, string, error)
	FindIdentityByID(ctx context.Context, text string, with graph.IdentityParts) (*graph.Identity, error)
	FindTags(ctx context.Context, f graph.TagFilter) ([]graph.TagCount, error)
}

// compWait is how long a TAB waits for the database file.
const compWait = 100 * time.Millisecond

// compOpen returns where completion reads from: the running server's socket when one
// holds the database, else the file opened read-only (a shared lock, given up after
// 100 ms while someone writes; a missing file is not created). nil when neither answers.
func (c *common) compOpen(ctx context.Context) (compSource, func()) {
	db := c.e.dbPath(c)
	if _, err := os.Stat(remote.SocketPath(db)); err == nil {
		if cl, _, err := remote.Dial(ctx, remote.SocketPath(db), time.Second); err == nil {
			return cl, func() { cl.Close() }
		}
	}
	if fi, err := os.Stat(db); err != nil || !fi.Mode().IsRegular() {
		return nil, func() {}
	}
	h, _ := c.host() // a read-only open reads the file under the host name it holds
	st, err := store.Open(db, store.Options{ReadOnly: true, Timeout: compWait, NoBackup: true, Host: h,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, func() {}
	}
	return st, func() { st.Close() }
}

// values are the completions of one kind that start with prefix, each with a
// description where there is one ("roland-jd-xi\tRoland JD-Xi").
func (c *common) values(ctx context.Context, kind, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	if kind == compRelType {
		return matching(graph.SeedRelationTypes, prefix)
	}
	src, done := c.compOpen(ctx)
	if src == nil {
		return nil
	}
	defer done()
	var out []string
	if kind == compIdentity || kind == compTarget || kind == compNode {
		ids, _, _, err := src.FindIdentities(ctx, graph.IdentityFilter{First: graph.MaxPageSize})
		if err == nil {
			for _, id := range ids {
				out = append(out, cobra.CompletionWithDesc(strings.TrimPrefix(id.ID, string(graph.KindIdentity)+":"), id.Name))
			}
		}
	}
	if kind == compDevice || kind == compTarget || kind == compNode {
		out = append(out, deviceValues(ctx, src)...)
	}
	if kind == compRobot || kind == compNode {
		out = append(out, robotValues(ctx, src, kind == compRobot)...)
	}
	if kind == compTag {
		tags, err := src.FindTags(ctx, graph.TagFilter{})
		if err == nil {
			for _, t := range tags {
				out = append(out, t.Tag)
			}
		}
	}
	return matching(out, prefix)
}

// heldTags are the tags the identity or device named by target holds.
func (c *common) heldTags(ctx context.Context, target, prefix string) []string {
	src, done := c.compOpen(ctx)
	if src == nil {
		return nil
	}
	defer done()
	id, err := src.FindIdentityByID(ctx, target, graph.IdentityParts{})
	if err != nil {
		return nil
	}
	return matching(id.Tags, prefix)
}

// deviceValues are the refs of every device the source knows, present or remembered.
func deviceValues(ctx context.Context, src compSource) []string {
	var out []string
	add := func(d *graph.Device) {
		if d.Ref != "" {
			out = append(out, cobra.CompletionWithDesc(d.Ref, d.Name))
		}
	}
	switch s := src.(type) {
	case *remote.Client:
		devs, _, _, err := s.Devices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize})
		if err == nil {
			for _, d := range devs {
				add(&d.Device)
			}
		}
	case *store.DB:
		devs, _, _, err := s.FindDevices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize})
		if err == nil {
			for _, d := range devs {
				if !strings.HasPrefix(d.Ref, "robot:") {
					add(d)
				}
			}
		}
	}
	return out
}

// robotValues are the robots' names (bare, as robot verbs take them; with their ref
// robot:NAME when bare is false).
func robotValues(ctx context.Context, src compSource, bare bool) []string {
	var refs []string
	switch s := src.(type) {
	case *remote.Client:
		if rs, err := s.Robots(ctx); err == nil {
			for _, r := range rs {
				refs = append(refs, r.Ref)
			}
		}
	case *store.DB:
		if rs, err := s.FindRobotRecords(ctx); err == nil {
			for _, r := range rs {
				refs = append(refs, r.Ref)
			}
		}
	}
	var out []string
	for _, ref := range refs {
		if bare {
			ref = strings.TrimPrefix(ref, "robot:")
		}
		out = append(out, ref)
	}
	return out
}

// matching keeps the values starting with prefix (a value's description does not
// count), sorted and without repeats.
func matching(vals []string, prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		name, _, _ := strings.Cut(v, "\t")
		if strings.HasPrefix(name, prefix) && !seen[name] {
			seen[name] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
