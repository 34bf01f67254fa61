package robot

import (
	"fmt"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// lookup finds a robot by ref (robot:<name>), bare name or device id.
func (f *Fleet) lookup(ref string) (*member, error) {
	s := strings.TrimSpace(ref)
	f.mu.RLock()
	defer f.mu.RUnlock()
	name := strings.ToLower(strings.TrimPrefix(s, "robot:"))
	if m := f.members[name]; m != nil {
		return m, nil
	}
	for _, m := range f.members {
		if s == graph.DeviceID(deviceKey(m.serial)) || s == deviceKey(m.serial) {
			return m, nil
		}
	}
	refs := make([]string, 0, len(f.members))
	for _, m := range f.sortedLocked() {
		refs = append(refs, m.ref)
	}
	if len(refs) == 0 {
		return nil, &graph.Error{Code: graph.ENOTFOUND, Field: "robot", Message: fmt.Sprintf("no robot %q; no robots are running (start the server with --demo or --sim-robot NAME)", ref)}
	}
	return nil, &graph.Error{Code: graph.ENOTFOUND, Field: "robot", Message: fmt.Sprintf("no robot %q%s; robots: %s", ref, graph.DidYouMean("robot:"+name, refs), strings.Join(refs, ", ")),
		Steps: []graph.Step{graph.ListStep(graph.ListRobots, "")}}
}
