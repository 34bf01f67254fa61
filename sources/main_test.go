package sources

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: a shared reading
// Snapshot started must have ended (Close waits for it).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
