package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

func runIdentity(ctx context.Context, e *env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "create":
		return identityCreate(ctx, e, rest)
	case "rename":
		return identitySimple(ctx, e, "rename", "ID NAME", rest, 2, func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
			id, err := svc.RenameIdentity(ctx, p[0], p[1])
			return id, "renamed", err
		})
	case "update":
		return identityUpdate(ctx, e, rest)
	case "delete":
		return identitySimple(ctx, e, "delete", "ID", rest, 1, func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
			id, err := svc.ResolveID(ctx, p[0], graph.KindIdentity)
			if err != nil {
				return nil, "", err
			}
			before, err := svc.FindIdentityByID(ctx, id, graph.IdentityParts{})
			if err != nil {
				return nil, "", err
			}
			return before, "deleted", svc.DeleteIdentity(ctx, id)
		})
	case "merge":
		return identitySimple(ctx, e, "merge", "FROM INTO", rest, 2, func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
			id, err := svc.MergeIdentities(ctx, p[0], p[1])
			return id, "merged " + p[0] + " into", err
		})
	case "restore":
		return identitySimple(ctx, e, "restore", "ID", rest, 1, func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
			id, err := svc.RestoreIdentity(ctx, p[0])
			return id, "restored", err
		})
	case "":
		if err := e.groupHelp("identity", rest, identitySubs); err != nil {
			return err
		}
		return usagef("identity: missing subcommand; want create, rename, update, delete, merge or restore")
	}
	return usagef("identity: unknown subcommand %q; want create, rename, update, delete, merge or restore", sub)
}

var identitySubs = []subcmd{
	{"create", "NAME", "create an identity (--slug, --data, --hint, --tag)"},
	{"rename", "ID NAME", "rename an identity"},
	{"update", "ID", "change an identity's name or data"},
	{"delete", "ID", "delete an identity (restore brings it back)"},
	{"merge", "FROM INTO", "merge one identity into another"},
	{"restore", "ID", "bring back a deleted identity"},
}

// subcommand splits off the first positional argument, leaving flags before it in place.
func subcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if isFlagArg(a) {
			if !strings.Contains(a, "=") && takesValue(a) {
				i++ // --db PATH: PATH is not the subcommand
			}
			continue
		}
		rest := append(append([]string{}, args[:i]...), args[i+1:]...)
		return a, rest
	}
	return "", args
}

func identitySimple(ctx context.Context, e *env, name, usage string, args []string, n int,
	fn func(ctx context.Context, svc graph.Service, pos []string) (*graph.Identity, string, error)) error {
	fs, c := e.flags("identity "+name, usage+" [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the identity as JSON")
	pos, err := parse(fs, args, n, n)
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		id, verb, err := fn(ctx, svc, pos)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, id)
		}
		fmt.Fprintf(e.stdout, "%s %s (%s)\n", verb, id.ID, id.Name)
		return nil
	})
}

func identityCreate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("identity create", "NAME [--slug S] [--data JSON] [--hint KIND=VALUE]… [--tag NS:VALUE]… [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the identity as JSON")
	slug := fs.String("slug", "", "the id's slug (default: made from the name)")
	data := fs.String("data", "", "free-form JSON object")
	var hints, tags stringList
	fs.Var(&hints, "hint", "a hint, kind=value (repeatable)")
	fs.Var(&tags, "tag", "a tag, ns:value (repeatable)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	in := graph.IdentityCreate{Name: pos[0], Slug: *slug, Tags: tags}
	if *data != "" {
		if !json.Valid([]byte(*data)) {
			return graph.FieldErrorf(graph.EINVALID, "data", "--data is not valid JSON; give an object such as '{\"room\":\"studio\"}'")
		}
		in.Data = json.RawMessage(*data)
	}
	if in.Hints, err = parseFingerprints(hints); err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		id, err := svc.CreateIdentity(ctx, in)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, id)
		}
		fmt.Fprintf(e.stdout, "created %s (%s)\n", id.ID, id.Name)
		return nil
	})
}

func identityUpdate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("identity update", "ID [--name NAME] [--data JSON] [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the identity as JSON")
	name := fs.String("name", "", "new name")
	data := fs.String("data", "", "replace the data with this JSON object")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	var u graph.IdentityUpdate
	set := map[string]bool{}
	fs.Visit(func(f *flagT) { set[f.Name] = true })
	if set["name"] {
		u.Name = name
	}
	if set["data"] {
		if !json.Valid([]byte(*data)) {
			return graph.FieldErrorf(graph.EINVALID, "data", "--data is not valid JSON; give an object such as '{\"room\":\"studio\"}'")
		}
		raw := json.RawMessage(*data)
		u.Data = &raw
	}
	if u.Name == nil && u.Data == nil {
		return usagef("identity update: nothing to change; give --name or --data")
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		id, err := svc.UpdateIdentity(ctx, pos[0], u)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, id)
		}
		fmt.Fprintf(e.stdout, "updated %s (%s)\n", id.ID, id.Name)
		return nil
	})
}

func parseFingerprints(ss []string) ([]graph.Fingerprint, error) {
	var out []graph.Fingerprint
	for _, s := range ss {
		f, err := graph.ParseFingerprint(s)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
