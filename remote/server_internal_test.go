package remote

import (
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// nopService is never called: the test only reads the handler's routes.
type nopService struct{ graph.Service }

// Every method the handler serves is either a read a read-only server answers or a
// change the refusal can name in a user's words.
func TestWriteNames_CoverEveryWrite(t *testing.T) {
	h := NewHandler(nopService{}, Options{}).(*handler)
	for name := range h.routes {
		if readMethods[name] {
			continue
		}
		if _, ok := writeNames[name]; !ok {
			t.Errorf("method %s changes the graph but has no words for the read-only refusal", name)
		}
	}
}
