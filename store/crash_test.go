package store_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

const crashEnv = "DEVGRAPH_CRASH_DB"

// TestHelperWriter is the child of TestCrash_SIGKILL: it writes in a loop from four
// goroutines and prints each acknowledged write's slug.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("child process of TestCrash_SIGKILL")
	}
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		fmt.Println("open error:", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := graph.WithActor(context.Background(), "cli:crash")
			for i := 0; ; i++ {
				slug := fmt.Sprintf("r%s-w%d-%d", os.Getenv(crashEnv+"_ROUND"), g, i)
				_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: slug, Hints: []graph.Fingerprint{{Kind: "usb_serial", Value: "0582:01a9:" + slug}}, Tags: []string{"role:synth"}})
				if err != nil {
					fmt.Println("write error:", err)
					os.Exit(4)
				}
				mu.Lock()
				fmt.Println("ack", slug)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// crashRounds is how many times TestCrash_SIGKILL kills its writer: 3, or
// $DEVGRAPH_CRASH_ROUNDS (`make chaos` runs 100, CI 20). Past the first three rounds each
// kill comes after a random number of acknowledged writes.
func crashRounds(t *testing.T) int {
	v := os.Getenv("DEVGRAPH_CRASH_ROUNDS")
	if v == "" {
		return 3
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("DEVGRAPH_CRASH_ROUNDS=%q: want a positive number", v)
	}
	return n
}

func TestCrash_SIGKILL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crash.db")
	rounds := crashRounds(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	for round := 0; round < rounds; round++ { // kill it repeatedly on the same file
		killAt := 150
		if round >= 3 {
			killAt = 1 + rng.IntN(400)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s_ROUND=%d", crashEnv, round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if slug, ok := strings.CutPrefix(line, "ack "); ok {
				acked = append(acked, slug)
				if len(acked) == killAt {
					cmd.Process.Signal(syscall.SIGKILL)
				}
				continue
			}
			if strings.Contains(line, "error") {
				t.Fatalf("child: %s", line)
			}
		}
		cmd.Wait()
		if len(acked) < killAt {
			t.Fatalf("round %d: child acknowledged only %d writes", round, len(acked))
		}

		db, err := store.Open(path, store.Options{NoBackup: true})
		if err != nil {
			t.Fatalf("reopen after kill: %v", err)
		}
		ctx := context.Background()
		r, err := db.VerifyChangelog(ctx)
		if err != nil || !r.OK {
			t.Fatalf("round %d: verify after kill: %+v %v", round, r, err)
		}
		for _, slug := range acked {
			id, err := db.FindIdentityByID(ctx, slug, graph.IdentityParts{})
			if err != nil || len(id.Hints) != 1 || len(id.Tags) != 1 {
				t.Fatalf("round %d: acknowledged write %s lost: %v", round, slug, err)
			}
			if evs, _, _ := db.FindEvents(ctx, graph.EventFilter{Target: "identity:" + slug}); len(evs) != 3 {
				t.Fatalf("round %d: %s has %d events, want 3", round, slug, len(evs))
			}
		}
		st, _ := db.Stats(ctx)
		if n := allEvents(t, db, graph.EventFilter{}); uint64(st.Identities)*3 != st.Events || len(n) != int(st.Events) {
			t.Fatalf("round %d: half a write survived: %d identities, %d events", round, st.Identities, st.Events)
		}
		t.Logf("round %d: %d acknowledged, %d on disk, chain of %d verified", round, len(acked), st.Identities, r.Checked)
		db.Close()
	}
	if err := store.CheckFile(path); err != nil {
		t.Fatal(err)
	}
}
