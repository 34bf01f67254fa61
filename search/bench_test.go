package search_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sahilm/fuzzy"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

var (
	benchAdj  = []string{"amber", "brisk", "cobalt", "dusty", "ember", "frosty", "golden", "hollow", "ivory", "jade", "keen", "lunar", "misty", "noble", "onyx", "polar", "quiet", "rusty", "silver", "tidal"}
	benchNoun = []string{"falcon", "otter", "synth", "sampler", "mixer", "rover", "drone", "sensor", "camera", "keyboard", "pedal", "looper", "arm", "scout", "beacon", "relay", "module", "deck", "console", "rack"}
)

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// benchName is query's benchmark naming, so the figures compare.
func benchName(i int) string {
	return fmt.Sprintf("%s %s %s %d", title(benchAdj[i%len(benchAdj)]), title(benchNoun[(i/len(benchAdj))%len(benchNoun)]), []string{"Mk I", "Mk II", "Pro", "Mini", "XL"}[(i/400)%5], i)
}

var benchFindTexts = []string{"amber falcon", "jade rover pro", "qt", "silver mk 12", "tdl", "otter", "b", "console 9999", "zzz", "lunar keyboard mini 4"}

// BenchmarkFind/fuzzy-alone is the baseline the index avoids: sahilm/fuzzy over every one
// of 100,000 names (query's BenchmarkFind measures the index over the same names).
func BenchmarkFind(b *testing.B) {
	b.Run("fuzzy-alone", func(b *testing.B) {
		names := make([]string, 100_000)
		for i := range names {
			names[i] = benchName(i)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = len(fuzzy.Find(benchFindTexts[i%len(benchFindTexts)], names))
		}
	})
}

// BenchmarkSuggestID_125k: "did you mean" from an index of 125,000 identities (the
// store's large fixture has as many), for text matching nothing and text found only
// inside a slug.
func BenchmarkSuggestID_125k(b *testing.B) {
	src := newFakeSource()
	for i := range 125_000 {
		src.addIdentity(fmt.Sprintf("identity:synth-%06d", i), benchName(i))
	}
	f := search.NewFinder(src)
	ctx := context.Background()
	if err := f.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"nothing-close", "zzzz-qqqq-wwww", ""},
		{"substring", "nth-124999", "identity:synth-124999"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if got, _ := f.SuggestID(ctx, graph.KindIdentity, c.in); got != c.want {
					b.Fatalf("SuggestID(%q)=%q, want %q", c.in, got, c.want)
				}
			}
		})
	}
}

// BenchmarkFinder_Store_100k: the index over a real store of 100,000 identities (the
// e2e benchmarks' database): building it from the store's name index, a find, and a
// find right after a write (a tag added: the index catches up from that one event).
func BenchmarkFinder_Store_100k(b *testing.B) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("devgraph-bench-%d-v%d.db", 100_000, migrations.CurrentVersion))
	storetest.BuildIdentities(b, path, 100_000, 6)
	db, err := store.Open(path, store.Options{NoBackup: true, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	texts := []string{"moog 004242", "Roland Synth 000016", "korg drum machine", "012345"}
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if err := search.NewFinder(db).Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tags", func(b *testing.B) {
		for b.Loop() {
			f := search.NewFinder(db)
			if err := f.Warm(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("find", func(b *testing.B) {
		f := search.NewFinder(db)
		i := 0
		for b.Loop() {
			if _, err := f.Find(ctx, graph.FindQuery{Text: texts[i%len(texts)], First: 10}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkFinder_Store_100k_AfterWrite: a find right after a note was written (timed:
// the find only), on a copy of the 100,000-identity database.
func BenchmarkFinder_Store_100k_AfterWrite(b *testing.B) {
	src := filepath.Join(os.TempDir(), fmt.Sprintf("devgraph-bench-%d-v%d.db", 100_000, migrations.CurrentVersion))
	storetest.BuildIdentities(b, src, 100_000, 6)
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "d.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := graph.WithActor(context.Background(), "bench")
	f := search.NewFinder(db)
	if err := f.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	texts := []string{"moog 004242", "Roland Synth 000016", "korg drum machine", "012345"}
	i := 0
	for b.Loop() {
		b.StopTimer()
		if _, err := db.AddNote(ctx, graph.NoteCreate{Target: storeIdentity(i * 7919 % 100_000), Body: fmt.Sprint("n", i)}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := f.Find(ctx, graph.FindQuery{Text: texts[i%len(texts)], First: 10}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// storeIdentity is the id of storetest.WriteIdentities' identity i (6 digits).
func storeIdentity(i int) string {
	makers := []string{"Roland", "Korg", "Yamaha", "Moog", "Arturia", "Novation", "Elektron", "Behringer"}
	kinds := []string{"Synth", "Drum Machine", "Sampler", "Controller", "Interface", "Mixer"}
	return graph.IdentityID(graph.Slugify(fmt.Sprintf("%s %s %06d", makers[i%8], kinds[i%6], i)))
}
