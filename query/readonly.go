package query

import "github.com/graphql-go/graphql/language/ast"

// onlyStopsRobots reports whether every root field op selects — through inline fragments
// and fragment spreads too — is robotStop (or __typename), the one mutation a --read-only
// server runs: stopping a robot is always allowed. The document has passed validation, so
// its fragments exist and do not cycle; seen guards anyway.
func onlyStopsRobots(op *ast.OperationDefinition, doc *ast.Document) bool {
	frags := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok && f.Name != nil {
			frags[f.Name.Value] = f
		}
	}
	seen := map[string]bool{}
	fields := 0
	var ok func(ss *ast.SelectionSet) bool
	ok = func(ss *ast.SelectionSet) bool {
		if ss == nil {
			return true
		}
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Name == nil {
					return false
				}
				switch x.Name.Value {
				case "robotStop":
					fields++
				case "__typename":
				default:
					return false
				}
			case *ast.InlineFragment:
				if !ok(x.SelectionSet) {
					return false
				}
			case *ast.FragmentSpread:
				if x.Name == nil || seen[x.Name.Value] {
					continue
				}
				seen[x.Name.Value] = true
				f := frags[x.Name.Value]
				if f == nil || !ok(f.SelectionSet) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	return ok(op.SelectionSet) && fields > 0
}
