package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

func runCompletion(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("completion", "bash|zsh|fish  (e.g. `source <(devgraph completion bash)`)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	spec := completionSpec(ctx)
	switch pos[0] {
	case "bash":
		return writeBashCompletion(e.stdout, spec)
	case "zsh":
		// zsh runs the bash function through its bash compatibility layer.
		fmt.Fprintln(e.stdout, "#compdef devgraph")
		fmt.Fprintln(e.stdout, "autoload -U +X bashcompinit && bashcompinit")
		return writeBashCompletion(e.stdout, spec)
	case "fish":
		return writeFishCompletion(e.stdout, spec)
	}
	return usagef("completion: unknown shell %q; want bash, zsh or fish", pos[0])
}

// groupSubs are the subcommands of each command group, for completion.
func groupSubs() map[string][]subcmd {
	return map[string][]subcmd{
		"identity":  identitySubs,
		"relation":  relationSubs,
		"robot":     robotSubs,
		"hint":      {{"add", "", "add hints"}, {"remove", "", "remove hints"}},
		"note":      {{"add", "", "leave a note"}, {"delete", "", "delete a note"}},
		"changelog": {{"verify", "", "check the hash chain"}, {"prune", "", "drop old events"}},
	}
}

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

// completionSpec asks every verb for its help (`VERB -h`, which parses flags and opens
// nothing) and reads the flags off it, so completion never lists flags of its own.
func completionSpec(ctx context.Context) *compSpec {
	s := &compSpec{verbs: commands, subs: groupSubs(), flags: map[string][]flagDoc{}}
	for _, c := range commands {
		if c.name == "completion" {
			continue
		}
		if subs, ok := s.subs[c.name]; ok {
			for _, sub := range subs {
				s.flags[c.name+" "+sub.name] = helpFlags(ctx, c.name, sub.name)
			}
			if c.name != "changelog" {
				continue // the bare group has no flags of its own
			}
		}
		s.flags[c.name] = helpFlags(ctx, c.name)
	}
	return s
}

// helpFlags runs `devgraph ARGS… -h` into a buffer and returns the flags its help lists.
func helpFlags(ctx context.Context, args ...string) []flagDoc {
	var out bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }}
	e.run(ctx, append(args, "-h"))
	var fl []flagDoc
	lines := strings.Split(out.String(), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "  -") {
			continue
		}
		// PrintDefaults writes "  -name" for a bool, "  -name type" for a flag with a
		// value, the usage after a tab or on the next line.
		head, usage, _ := strings.Cut(strings.TrimPrefix(l, "  -"), "\t")
		name, typ, _ := strings.Cut(head, " ")
		if usage == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    \t") {
			usage = strings.TrimSpace(lines[i+1])
		}
		fl = append(fl, flagDoc{name: name, value: typ != "", usage: usage})
	}
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
