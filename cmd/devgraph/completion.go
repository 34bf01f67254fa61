package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devgraph/devgraph/graph"
)

func newCompletionCmd(c *common) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "print a shell completion script: completion bash|zsh|fish",
		Example: `  source <(devgraph completion bash)
  devgraph completion zsh > "${fpath[1]}/_devgraph"
  devgraph completion fish | source`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompletion(cmd.Context(), cmd.Root(), args[0], c.e.stdout)
		},
	}
}

func runCompletion(ctx context.Context, root *cobra.Command, shell string, out io.Writer) error {
	spec := completionSpec(root)
	switch shell {
	case "bash":
		return writeBashCompletion(out, spec)
	case "zsh":
		// zsh runs the bash function through its bash compatibility layer.
		fmt.Fprintln(out, "#compdef devgraph")
		fmt.Fprintln(out, "autoload -U +X bashcompinit && bashcompinit")
		return writeBashCompletion(out, spec)
	case "fish":
		return writeFishCompletion(out, spec)
	}
	return usagef("completion: unknown shell %q; want bash, zsh or fish", shell)
}

// subcmd is one subcommand of a command group.
type subcmd struct{ name, desc string }

// command is one verb.
type command struct{ name, summary string }

// flagDoc is one flag of a verb: its name, whether it takes a value and the first line
// of its help.
type flagDoc struct {
	name  string
	value bool
	usage string
}

// compSpec is what completion knows: the verbs, each group's subcommands and the flags of
// every verb (keyed "verb" or "verb sub").
type compSpec struct {
	verbs []command
	subs  map[string][]subcmd
	flags map[string][]flagDoc
}

// completionSpec reads the verbs, subcommands and flags off the command tree, so
// completion never lists flags of its own.
func completionSpec(root *cobra.Command) *compSpec {
	s := &compSpec{subs: map[string][]subcmd{}, flags: map[string][]flagDoc{}}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		s.verbs = append(s.verbs, command{c.Name(), c.Short})
		if c.Name() == "completion" || c.Name() == "help" {
			continue
		}
		if c.HasAvailableSubCommands() {
			for _, sub := range c.Commands() {
				if !sub.IsAvailableCommand() {
					continue
				}
				s.subs[c.Name()] = append(s.subs[c.Name()], subcmd{sub.Name(), sub.Short})
				s.flags[c.Name()+" "+sub.Name()] = flagDocs(sub)
			}
			if c.Name() != "changelog" {
				continue // the bare group has no flags of its own
			}
		}
		s.flags[c.Name()] = flagDocs(c)
	}
	return s
}

// flagDocs are every flag a command takes, its own and the global ones.
func flagDocs(c *cobra.Command) []flagDoc {
	var fl []flagDoc
	add := func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		value := f.NoOptDefVal == ""
		fl = append(fl, flagDoc{name: f.Name, value: value, usage: f.Usage})
		if f.Shorthand != "" {
			fl = append(fl, flagDoc{name: f.Shorthand, value: value, usage: f.Usage})
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	sort.Slice(fl, func(i, j int) bool { return fl[i].name < fl[j].name })
	return fl
}

// flagValues are the fixed values some flags take, completed after the flag.
var flagValues = map[string]string{
	"format":    "jsonl dot mermaid",
	"direction": "out in both",
	"kind":      "info success warning danger",
	"type":      strings.Join(graph.SeedRelationTypes, " "),
}

// fileFlags take a path.
var fileFlags = []string{"db", "sys-root", "proc-root", "pw-dump-file", "token-file", "vars-file", "tls-cert", "tls-key", "f"}

func writeBashCompletion(w io.Writer, s *compSpec) error {
	var b strings.Builder
	b.WriteString("# bash completion for devgraph: source <(devgraph completion bash)\n")
	b.WriteString("_devgraph() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")
	b.WriteString("  local verb=\"\" sub=\"\" npos=0 i w\n")
	// Find the verb, its subcommand and how many positionals precede the cursor, skipping
	// flags and the values of flags that take one.
	b.WriteString("  for ((i = 1; i < COMP_CWORD; i++)); do\n")
	b.WriteString("    w=\"${COMP_WORDS[i]}\"\n")
	b.WriteString("    case \"$w\" in\n")
	b.WriteString("      --*=*|-[a-z]*=*) ;;\n")
	b.WriteString("      " + strings.Join(s.valueFlags(), "|") + ") ((i++)) ;;\n")
	b.WriteString("      -[a-z]*) ;;\n")
	b.WriteString("      *) if [[ -z $verb ]]; then verb=\"$w\"\n")
	b.WriteString("         elif [[ -z $sub && \" $(_devgraph_subs \"$verb\") \" == *\" $w \"* ]]; then sub=\"$w\"\n")
	b.WriteString("         else ((npos++)); fi ;;\n")
	b.WriteString("    esac\n")
	b.WriteString("  done\n")
	b.WriteString("  case \"$prev\" in\n")
	for _, f := range fileFlags {
		fmt.Fprintf(&b, "    --%s|-%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f, f)
	}
	for _, f := range sortedKeys(flagValues) {
		fmt.Fprintf(&b, "    --%s|-%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", f, f, flagValues[f])
	}
	b.WriteString("  esac\n")
	b.WriteString("  if [[ -z $verb ]]; then\n")
	b.WriteString("    COMPREPLY=($(compgen -W " + quoteWords(verbNames(s.verbs)) + " -- \"$cur\")); return\n")
	b.WriteString("  fi\n")
	b.WriteString("  local subs; subs=\"$(_devgraph_subs \"$verb\")\"\n")
	b.WriteString("  if [[ -n $subs && -z $sub && $cur != -* ]]; then\n")
	b.WriteString("    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\")); return\n")
	b.WriteString("  fi\n")
	b.WriteString("  if [[ $cur == -* ]]; then\n")
	b.WriteString("    COMPREPLY=($(compgen -W \"$(_devgraph_flags \"$verb${sub:+ $sub}\")\" -- \"$cur\")); return\n")
	b.WriteString("  fi\n")
	// relate FROM TYPE TO: the second positional is a relation type.
	b.WriteString("  if [[ $verb == relate || $verb == unrelate ]] && ((npos == 1)); then\n")
	b.WriteString("    COMPREPLY=($(compgen -W " + quoteWords(graph.SeedRelationTypes) + " -- \"$cur\")); return\n")
	b.WriteString("  fi\n")
	b.WriteString("  COMPREPLY=($(compgen -f -- \"$cur\"))\n")
	b.WriteString("}\n")

	b.WriteString("_devgraph_subs() {\n  case \"$1\" in\n")
	for _, g := range sortedKeys(s.subs) {
		fmt.Fprintf(&b, "    %s) echo %s ;;\n", g, quoteWords(subNames(s.subs[g])))
	}
	fmt.Fprintf(&b, "    completion) echo bash zsh fish ;;\n")
	fmt.Fprintf(&b, "    help) echo %s ;;\n", quoteWords(verbNames(s.verbs)))
	b.WriteString("  esac\n}\n")

	b.WriteString("_devgraph_flags() {\n  case \"$1\" in\n")
	for _, k := range sortedKeys(s.flags) {
		var names []string
		for _, f := range s.flags[k] {
			names = append(names, flagSpelling(f.name))
		}
		fmt.Fprintf(&b, "    %q) echo %s ;;\n", k, quoteWords(names))
	}
	b.WriteString("  esac\n}\n")
	b.WriteString("complete -o filenames -F _devgraph devgraph\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFishCompletion(w io.Writer, s *compSpec) error {
	var b strings.Builder
	b.WriteString("# fish completion for devgraph: devgraph completion fish | source\n")
	b.WriteString("complete -c devgraph -f\n")
	for _, c := range s.verbs {
		fmt.Fprintf(&b, "complete -c devgraph -n __fish_use_subcommand -a %s -d %s\n", fishQuote(c.name), fishQuote(c.summary))
	}
	for _, g := range sortedKeys(s.subs) {
		names := subNames(s.subs[g])
		for _, sub := range s.subs[g] {
			fmt.Fprintf(&b, "complete -c devgraph -n %s -a %s -d %s\n",
				fishQuote("__fish_seen_subcommand_from "+g+"; and not __fish_seen_subcommand_from "+strings.Join(names, " ")),
				fishQuote(sub.name), fishQuote(sub.desc))
		}
	}
	fmt.Fprintf(&b, "complete -c devgraph -n %s -a 'bash zsh fish'\n", fishQuote("__fish_seen_subcommand_from completion"))
	fmt.Fprintf(&b, "complete -c devgraph -n %s -a %s\n", fishQuote("__fish_seen_subcommand_from help"), fishQuote(strings.Join(verbNames(s.verbs), " ")))
	fmt.Fprintf(&b, "complete -c devgraph -n %s -a %s\n", fishQuote("__fish_seen_subcommand_from relate unrelate"), fishQuote(strings.Join(graph.SeedRelationTypes, " ")))
	for _, k := range sortedKeys(s.flags) {
		verb, sub, _ := strings.Cut(k, " ")
		cond := "__fish_seen_subcommand_from " + verb
		if sub != "" {
			cond += "; and __fish_seen_subcommand_from " + sub
		}
		for _, f := range s.flags[k] {
			extra := ""
			if v, ok := flagValues[f.name]; ok {
				extra = " -x -a " + fishQuote(v)
			} else if containsString(fileFlags, f.name) {
				extra = " -r -F"
			}
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			fmt.Fprintf(&b, "complete -c devgraph -n %s %s -d %s%s\n", fishQuote(cond), opt, fishQuote(f.usage), extra)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// valueFlags are the spellings of every flag that takes a separate value (--db PATH).
func (s *compSpec) valueFlags() []string {
	seen := map[string]bool{}
	for _, fl := range s.flags {
		for _, f := range fl {
			if f.value {
				seen["--"+f.name], seen["-"+f.name] = true, true
			}
		}
	}
	return sortedKeys(seen)
}

// flagSpelling is how completion offers a flag: -m for one letter, --name otherwise.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func verbNames(cs []command) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

func subNames(ss []subcmd) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.name
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// quoteWords is a single-quoted shell word holding the words space-separated.
func quoteWords(ws []string) string {
	return "'" + strings.ReplaceAll(strings.Join(ws, " "), "'", `'\''`) + "'"
}

// fishQuote is a single-quoted fish string.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
