package store_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// TestRemoveHints_MissingSaysWhatIsThere: removing a hint the identity lacks said "its
// hints are: " with nothing after it when it had none, and listed every hint however
// many it had (one error line of any length).
func TestRemoveHints_MissingSaysWhatIsThere(t *testing.T) {
	db := openFile(t, filepath.Join(t.TempDir(), "d.db"), store.Options{})
	defer db.Close()
	ctx := ctxActor("cli:hints")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Bare"}); err != nil {
		t.Fatal(err)
	}
	_, err := db.RemoveHints(ctx, "bare", []graph.Fingerprint{fp("usb_id", "0582:9999")})
	if graph.ErrorCode(err) != graph.ENOTFOUND || !strings.HasSuffix(err.Error(), "it has no hints") {
		t.Errorf("no hints: %v", err)
	}
	var many []graph.Fingerprint
	for i := 0; i < 3; i++ {
		for j := 0; j < 32; j++ {
			many = append(many, fp("usb_id", fmt.Sprintf("%04x:%04x", i, j)))
		}
		if _, err := db.AddHints(ctx, "bare", many[len(many)-32:], false); err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.RemoveHints(ctx, "bare", []graph.Fingerprint{fp("usb_id", "0582:9999")})
	if graph.ErrorCode(err) != graph.ENOTFOUND || len(err.Error()) > 400 || !strings.Contains(err.Error(), "and 86 more") {
		t.Errorf("96 hints: %d bytes: %v", len(err.Error()), err)
	}
}
