package main

import (
	"strconv"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// errorLine is what the CLI prints for a user error: the service's problem text, word for
// word as every interface states it, then its next steps as commands and flags.
func errorLine(err error) string {
	msg := oneLine(graph.ErrorMessage(err))
	advice := cliAdvice(graph.ErrorSteps(err))
	if advice == "" {
		return msg
	}
	if strings.HasSuffix(msg, "?") { // "did you mean …?": the advice is a sentence of its own
		return msg + " " + strings.ToUpper(advice[:1]) + advice[1:]
	}
	return strings.TrimRight(msg, ".") + "; " + advice
}

// cliAdvice renders steps as commands: "run `devgraph identities`", several joined by
// " or ".
func cliAdvice(steps []graph.Step) string {
	var cmds, words []string
	for _, s := range steps {
		c, w := stepCommand(s)
		if c != "" {
			cmds = append(cmds, "`"+c+"`")
		}
		if w != "" {
			words = append(words, w)
		}
	}
	var parts []string
	if len(cmds) > 0 {
		parts = append(parts, "run "+strings.Join(cmds, " or "))
	}
	parts = append(parts, words...)
	return strings.Join(parts, "; ")
}

// stepCommand renders one step as a devgraph command line, or as words when the step is
// no command of its own (add a flag, retry).
func stepCommand(s graph.Step) (cmd, words string) {
	switch s.Do {
	case graph.StepList:
		switch s.Kind {
		case graph.ListIdentities:
			return "devgraph identities", ""
		case graph.ListDevices:
			return "devgraph devices --all", ""
		case graph.ListBound:
			return "devgraph devices", ""
		case graph.ListUnbound:
			return "devgraph unbound", ""
		case graph.ListRobots:
			return "devgraph robot status", ""
		case graph.ListRelationTypes:
			return "devgraph relations --types", ""
		case graph.ListTags:
			return "devgraph tags", ""
		case graph.ListNotes:
			if s.ID != "" {
				return "devgraph notes " + shellWord(s.ID), ""
			}
			return "devgraph identities", ""
		case graph.ListChangelog:
			if s.ID != "" {
				return "devgraph changelog --target " + shellWord(s.ID), ""
			}
			return "devgraph changelog", ""
		case graph.ListRelations, graph.ListClients:
			if s.ID != "" {
				return "devgraph relations " + shellWord(s.ID), ""
			}
			if s.Kind == graph.ListClients {
				return "devgraph relations DEVICE", ""
			}
			return "devgraph relations", ""
		}
	case graph.StepShow:
		return "devgraph show " + shellWord(s.ID), ""
	case graph.StepBind:
		c := "devgraph bind " + shellWord(s.Ref)
		if s.Identity != "" {
			c += " " + shellWord(s.Identity)
		} else {
			c += " --new " + shellWord(s.Name)
		}
		if s.Arg != "" {
			c += " " + cliFlag(s.Arg, s.Value)
		}
		return c, ""
	case graph.StepPass:
		if s.Value == "" {
			return "", "leave out --" + flagName(s.Arg)
		}
		return "", "add " + cliFlag(s.Arg, s.Value)
	case graph.StepUpdate:
		return "devgraph relation update " + shellWord(s.ID) + " --attr KEY=VALUE", ""
	case graph.StepRemove:
		if s.ID == "" {
			return "devgraph unrelate REL", ""
		}
		return "devgraph unrelate " + shellWord(s.ID), ""
	case graph.StepDelNote:
		return "devgraph notes " + shellWord(s.ID), "then `devgraph note delete NOTE` for old ones"
	case graph.StepArm:
		return "devgraph robot arm " + shellWord(s.Robot), ""
	case graph.StepStop:
		return "devgraph robot stop " + shellWord(s.Robot), ""
	case graph.StepNavigate:
		if s.X != nil && s.Y != nil {
			return "devgraph robot navigate " + shellWord(s.Robot) + " " + num(*s.X) + " " + num(*s.Y), ""
		}
		return "devgraph robot navigate " + shellWord(s.Robot) + " X Y", ""
	case graph.StepDetect:
		return "", "detect objects near " + s.Robot + " (GraphQL robot { detect }, or MCP robot_detect)"
	case graph.StepGrasp:
		return "", "grasp an object with " + s.Robot + " (GraphQL robotGrasp, or MCP robot_grasp)"
	case graph.StepRelease:
		return "", "release what " + s.Robot + " holds (GraphQL robotRelease, or MCP robot_release)"
	case graph.StepPage:
		return "", "ask for less (--limit, a narrower filter) and page with --after"
	case graph.StepRetry:
		return "", "try again in a moment"
	case graph.StepServe:
		return "devgraph serve", ""
	}
	return "", ""
}

// flagName is an argument's flag: new_type → new-type; new_name is bind's --new.
func flagName(arg string) string {
	if arg == "new_name" {
		return "new"
	}
	return strings.ReplaceAll(arg, "_", "-")
}

func cliFlag(arg, value string) string {
	if value == "true" {
		return "--" + flagName(arg)
	}
	return "--" + flagName(arg) + " " + shellWord(value)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// shellWord quotes a word for a shell only when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":._-/@+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
