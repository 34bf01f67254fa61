package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/sahilm/fuzzy"

	"github.com/devgraph/devgraph/graph"
)

// staticSource is a NameSource whose changelog stays empty: an index installed by hand
// is never caught up (nothing else of it is read).
type staticSource struct{ graph.NameSource }

func (staticSource) FindEvents(context.Context, graph.EventFilter) ([]*graph.Event, string, error) {
	return nil, "", nil
}

// referenceFind is what Find answers, said plainly: every entry in the index's order,
// tiered by prefix, substring and subsequence of its lowercased name (at most maxFuzzy
// candidates, subsequence matches taken while fewer are held), kept by kind and tags,
// then plain sahilm/fuzzy over the candidates and the first n of its sorted matches. No
// bitmaps, no early stop, no partial sort.
func referenceFind(f *Finder, text, kind string, tags []string, n int) []graph.FindHit {
	text = strings.TrimSpace(text)
	lower := strings.ToLower(text)
	ascii := true
	for i := 0; i < len(lower); i++ {
		if lower[i] >= 0x80 {
			ascii = false
		}
	}
	only, _ := kindFilterOf(kind)
	s := &search{only: only, tags: tags}
	qmask := charMask(lower)
	var prefix, contains, subseq []int
	for i := range f.ent {
		e := &f.ent[i]
		if f.masks[i][0]&qmask != qmask || !s.keep(e) {
			continue
		}
		switch {
		case strings.HasPrefix(e.lower, lower):
			prefix = append(prefix, i)
		case strings.Contains(e.lower, lower):
			contains = append(contains, i)
		case len(prefix)+len(contains)+len(subseq) < maxFuzzy && (!ascii || subsequence(lower, e.lower)):
			subseq = append(subseq, i)
		}
	}
	picked := append(append(append([]int{}, prefix...), contains...), subseq...)
	picked = picked[:min(len(picked), maxFuzzy)]
	names := make([]string, len(picked))
	for j, i := range picked {
		names[j] = f.ent[i].display()
	}
	var out []graph.FindHit
	for _, m := range fuzzy.Find(text, names) {
		if len(out) == n {
			break
		}
		out = append(out, f.ent[picked[m.Index]].hit(m.Score, m.MatchedIndexes))
		f.withTags(&out[len(out)-1], &f.ent[picked[m.Index]])
	}
	return out
}

// The index's fast path (character-count bitmaps, the early stop at maxFuzzy prefix
// matches, the partial sort) answers exactly what referenceFind does: same hits, same
// order, same scores and matched indexes, over 20,000 random names — many sharing
// prefixes, some mixed case or non-ASCII — for texts cut from them, typed with gaps,
// and made up, before and after entries change places (a delete swaps the last one in).
func TestFinder_SameAsPlainFuzzy(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 1))
	words := []string{"Roland", "roland", "Korg", "Moog", "JD-Xi", "synth", "Synth", "drum", "Machine",
		"mixer", "MIXER", "Élan", "Ärger", "usb", "hub", "3-3.2", "alpha_beta", "x", "scout", "arm"}
	const n = 20_000
	ents := make([]finderEntry, 0, n)
	var keys []idKeys
	var masks []classSet
	for i := 0; i < n; i++ {
		var b strings.Builder
		for w := 0; w < 1+r.IntN(4); w++ {
			if w > 0 {
				b.WriteString([]string{" ", "-", "_", ".", "/", "\\", "", "+", "#", "~"}[r.IntN(10)])
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		if r.IntN(3) > 0 {
			fmt.Fprintf(&b, " %0*d", 1+r.IntN(6), r.IntN(1_000_000))
		}
		name := b.String()
		if r.IntN(4) == 0 { // flip the case of some letters
			bs := []byte(name)
			for k := range bs {
				if c := bs[k]; r.IntN(3) == 0 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
					bs[k] ^= 0x20
				}
			}
			name = string(bs)
		}
		if r.IntN(5) == 0 {
			d := &graph.Device{ID: fmt.Sprintf("device:%d", i), Name: name, Source: []string{"usb", "robot"}[r.IntN(2)], Tags: []string{"role:synth"}}
			e, m := deviceEntry(d)
			ents, masks, keys = append(ents, e), append(masks, m), append(keys, deviceKeys(d))
			continue
		}
		id := &graph.Identity{ID: fmt.Sprintf("identity:n%d", i), Name: name}
		if r.IntN(2) == 0 {
			id.Tags = []string{"role:synth"}
		}
		e, m := identityEntry(id)
		ents, masks, keys = append(ents, e), append(masks, m), append(keys, identityKeys(id))
	}
	f := NewFinder(staticSource{})
	if err := f.install(ents, masks, keys, 0, true); err != nil {
		t.Fatal(err)
	}
	texts := []string{"roland", "Roland Synth", "synth 12", "moog 00", "3-3", "x x x", "élan", "ärger mix",
		"rld", "korg drum machine", "123", "000", "zzzz", "s", "mixer mixer", "a_b", "jd xi 9",
		"M", "xM", "sM", "hM", "h", "S", "rM", "yM", "a", "b", "e", "x", "AB", "mX", "mr", "sy"}
	for j := 0; j < 150; j++ { // cut from a name, whole or with letters dropped
		name := ents[r.IntN(len(ents))].display()
		a := r.IntN(len(name))
		cut := name[a:min(len(name), a+1+r.IntN(12))]
		if j%3 == 0 {
			var b strings.Builder
			for k := 0; k < len(cut); k++ {
				if r.IntN(3) > 0 {
					b.WriteByte(cut[k])
				}
			}
			cut = b.String()
		}
		texts = append(texts, cut)
	}
	ctx := context.Background()
	check := func(stage string) {
		t.Helper()
		for j, text := range texts {
			if !utf8Valid(text) || strings.TrimSpace(text) == "" {
				continue
			}
			q := graph.FindQuery{Text: text, First: []int{1, 10, 20, 200}[j%4]}
			switch j % 7 {
			case 1:
				q.Kind = "device"
			case 2:
				q.Kind = "robot"
			case 3:
				q.Tags = []string{"role:synth"}
			}
			got, err := f.Find(ctx, q)
			if err != nil {
				t.Fatalf("%s: Find(%+v): %v", stage, q, err)
			}
			want := referenceFind(f, q.Text, q.Kind, q.Tags, q.First)
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Find(%+v):\n got %d %v\nwant %d %v", stage, q, len(got), head(got), len(want), head(want))
			}
		}
	}
	check("built")
	// Move entries about as deletes do, and rename some, through the same paths a sync takes.
	f.idx.Lock()
	f.ensurePosLocked()
	for k := 0; k < 2000; k++ {
		i := r.IntN(len(f.ent))
		e := f.ent[i]
		e.setName(e.name() + " " + words[r.IntN(len(words))])
		e.lower = strings.ToLower(e.name())
		mask := classesOf(e.name(), e.lower)
		f.mark(i, f.masks[i], false)
		f.mark(i, mask, true)
		f.ent[i], f.masks[i] = e, mask
		last := len(f.ent) - 1
		if k%2 == 0 && i != last { // swap the last entry into i's place, i to the end
			f.mark(i, f.masks[i], false)
			f.mark(last, f.masks[last], false)
			f.ent[i], f.ent[last] = f.ent[last], f.ent[i]
			f.masks[i], f.masks[last] = f.masks[last], f.masks[i]
			f.mark(i, f.masks[i], true)
			f.mark(last, f.masks[last], true)
		}
	}
	f.idx.Unlock()
	check("after changes")
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func head(h []graph.FindHit) []graph.FindHit { return h[:min(len(h), 5)] }

// TestFillClasses: the bitmaps fillClasses makes, a block of 64 entries at a time and
// in two halves above 16,384 entries, are the ones marking each entry in turn makes, at
// sizes around a word's and the halves' edges.
func TestFillClasses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 63, 64, 65, 16383, 16384, 16385, 40001} {
		masks := make([]classSet, n)
		for i := range masks {
			for l := range masks[i] {
				masks[i][l] = r.Uint64() >> (r.IntN(64) + 16*l) // sparser level by level; some zero
			}
		}
		words := (n + 63) / 64
		var got, want [levels][64][]uint64
		for l := range got {
			for b := range got[l] {
				got[l][b], want[l][b] = make([]uint64, words), make([]uint64, words)
			}
		}
		fillClasses(&got, masks)
		ref := &Finder{classes: want}
		for i, m := range masks {
			ref.mark(i, m, true)
		}
		if !reflect.DeepEqual(got, ref.classes) {
			t.Fatalf("%d entries: fillClasses differs from marking each entry", n)
		}
	}
}

// TestFinderEntrySize: an entry stays 48 bytes; a server builds 100,000 of them before
// its first find, and a field added here is 10 MB of memory first touched on that path.
func TestFinderEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(finderEntry{}); got != 48 {
		t.Fatalf("finderEntry is %d bytes, want 48: put what a build does not read behind more", got)
	}
}
