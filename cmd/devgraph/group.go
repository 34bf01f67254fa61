package main

import (
	"flag"
	"fmt"
	"strings"
)

// subcmd is one subcommand of a command group, for the group's help.
type subcmd struct{ name, usage, desc string }

// groupHelp answers `devgraph GROUP -h` (no subcommand, only a help flag): the group's
// subcommands on stdout and flag.ErrHelp (exit 0). Without a help flag it returns nil
// and the caller reports the missing subcommand (exit 2).
func (e *env) groupHelp(group string, args []string, subs []subcmd) error {
	help := false
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "-h", "-help", "--help":
			help = true
		}
	}
	if !help {
		return nil
	}
	fmt.Fprintf(e.stdout, "usage: devgraph %s <subcommand> [flags] [args]\n\nsubcommands:\n", group)
	width := 0
	for _, s := range subs {
		width = max(width, len(s.name)+1+len(s.usage))
	}
	for _, s := range subs {
		fmt.Fprintf(e.stdout, "  %-*s  %s\n", width, strings.TrimSpace(s.name+" "+s.usage), s.desc)
	}
	fmt.Fprintf(e.stdout, "\nrun `devgraph %s <subcommand> -h` for its flags\n", group)
	return flag.ErrHelp
}
