// Package storetest opens real devgraph databases for tests.
package storetest

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/store"
)

// Host is the host name the files of this package are written under (unless opts name
// another): the same on every machine, so goldens and tables hold.
const Host = "studio"

// MustOpen opens a new database in a temp dir and, when the test ends, closes it and checks
// the file's page consistency and changelog chain. opts may carry a clock.
func MustOpen(tb testing.TB, opts ...store.Options) *store.DB {
	tb.Helper()
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.NoBackup = true
	if o.Host == "" {
		o.Host = Host
	}
	if o.Timeout == 0 {
		o.Timeout = time.Second
	}
	path := filepath.Join(tb.TempDir(), "devgraph.db")
	db, err := store.Open(path, o)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close %s: %v", path, err)
		}
		if err := store.CheckFile(path); err != nil {
			tb.Errorf("check %s: %v", path, err)
		}
	})
	return db
}

// Clock is a settable clock for Options.Now that advances by Step on each reading.
type Clock struct {
	mu   sync.Mutex
	T    time.Time
	Step time.Duration
}

// Now returns the clock's time and advances it.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.T
	c.T = c.T.Add(c.Step)
	return t
}
