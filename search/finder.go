package search

import (
	"context"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"

	"github.com/devgraph/devgraph/graph"
)

// Finder is an in-memory index of identity and device names for fuzzy search. Running
// sahilm/fuzzy over 100,000 names costs tens of milliseconds, so Finder keeps each name
// lowercased with a 64-bit mask of the characters it holds: a name lacking any character
// of the text is skipped with one AND, names that contain the text (as a prefix, then
// anywhere) are preferred, and fuzzy scores at most maxFuzzy candidates.
//
// The index is built on first use and kept current from the changelog: every Find reads
// the newest event's seq (one cheap read) and, when the log has grown, re-reads only the
// nodes the new events touched. Reading the log rather than waiting for change
// notifications (which arrive asynchronously) means a Find right after a write sees it.
// Safe for concurrent use.
type Finder struct {
	src graph.NameSource

	mu      sync.Mutex // guards the fields below and serialises syncs
	built   bool
	lastSeq uint64 // newest changelog seq the index reflects

	idx sync.RWMutex
	ent []finderEntry
	ids idIndex        // beside ent (same positions): what SuggestID compares typed ids with
	pos map[string]int // id → index in ent and ids
}

type finderEntry struct {
	id    string
	kind  string // identity, device
	robot bool
	name  string
	lower string
	mask  uint64
	tags  []string
}

const (
	maxFuzzy       = 1000  // candidates fuzzy scores at most
	maxPending     = 20000 // new events beyond which a full rebuild is cheaper
	maxFindTextLen = 200
)

var (
	_ graph.Finder    = (*Finder)(nil)
	_ graph.Suggester = (*Finder)(nil)
)

// NewFinder returns a Finder over src; it reads nothing until its first use.
func NewFinder(src graph.NameSource) *Finder {
	return &Finder{src: src, pos: map[string]int{}}
}

// Close releases nothing today; it is kept so callers can treat Finder like the other
// long-lived parts.
func (f *Finder) Close() {}

// Refresh rebuilds the whole index now.
func (f *Finder) Refresh(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rebuildLocked(ctx)
}

func (f *Finder) headSeq(ctx context.Context) (uint64, error) {
	evs, _, err := f.src.FindEvents(ctx, graph.EventFilter{First: 1})
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	return evs[0].Seq, nil
}

func (f *Finder) rebuildLocked(ctx context.Context) error {
	head, err := f.headSeq(ctx)
	if err != nil {
		return err
	}
	ctx = context.WithValue(ctx, syncKey{}, f)
	var ents []finderEntry
	var keys []idKeys
	robots := map[string]bool{}
	after := ""
	for {
		devs, _, next, err := f.src.FindDevices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize, After: after})
		if err != nil {
			return err
		}
		for _, d := range devs {
			ents = append(ents, deviceEntry(d))
			keys = append(keys, deviceKeys(d))
			if d.Source == "robot" && d.IdentityID != "" {
				robots[d.IdentityID] = true
			}
		}
		if next == "" || len(devs) == 0 {
			break
		}
		after = next
	}
	after = ""
	for {
		ids, _, next, err := f.src.FindIdentities(ctx, graph.IdentityFilter{First: graph.MaxPageSize, After: after})
		if err != nil {
			return err
		}
		for _, id := range ids {
			e := identityEntry(id)
			e.robot = robots[id.ID]
			ents = append(ents, e)
			keys = append(keys, identityKeys(id))
		}
		if next == "" || len(ids) == 0 {
			break
		}
		after = next
	}
	pos := make(map[string]int, len(ents))
	for i, e := range ents {
		pos[e.id] = i
	}
	f.idx.Lock()
	f.ent, f.pos = ents, pos
	f.ids.reset(keys)
	f.idx.Unlock()
	f.built, f.lastSeq = true, head
	return nil
}

func identityEntry(id *graph.Identity) finderEntry {
	return finderEntry{id: id.ID, kind: "identity", name: id.Name, lower: strings.ToLower(id.Name), mask: charMask(id.Name), tags: sortedCopy(id.Tags)}
}

func deviceEntry(d *graph.Device) finderEntry {
	return finderEntry{id: d.ID, kind: "device", robot: d.Source == "robot", name: d.Name, lower: strings.ToLower(d.Name), mask: charMask(d.Name), tags: sortedCopy(d.Tags)}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// sync brings the index up to date before a search: it reads the events written since the
// last sync (newest first, down to the last seq seen) and re-reads the nodes they touched.
func (f *Finder) sync(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.built {
		return f.rebuildLocked(ctx)
	}
	head, err := f.headSeq(ctx)
	if err != nil {
		return err
	}
	if head == f.lastSeq {
		return nil
	}
	if head < f.lastSeq {
		// ctx reads an older snapshot (a query's read view begun before the index's
		// last sync): the index is newer already; rebuilding it from the old view would
		// only send it back (and a later sync forward again).
		return nil
	}
	if head-f.lastSeq > maxPending {
		return f.rebuildLocked(ctx)
	}
	ctx = context.WithValue(ctx, syncKey{}, f)
	touched := map[string]bool{}
	robotBinds := map[string]bool{} // devices bound or unbound: their identity may have become a robot
	after := ""
scan:
	for {
		evs, next, err := f.src.FindEvents(ctx, graph.EventFilter{First: graph.MaxPageSize, After: after})
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Seq <= f.lastSeq {
				break scan
			}
			switch graph.KindOf(ev.Target) {
			case graph.KindIdentity, graph.KindDevice:
				touched[ev.Target] = true
			}
			if ev.Action == graph.ActDeviceBind || ev.Action == graph.ActDeviceUnbind {
				robotBinds[ev.Target] = true
			}
		}
		if next == "" || len(evs) == 0 {
			break
		}
		after = next
	}
	ids := make([]string, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	type upd struct {
		id      string
		ent     *finderEntry
		keys    idKeys
		boundTo string
	}
	var upds []upd
	for _, id := range ids {
		var e *finderEntry
		var k idKeys
		boundTo := ""
		switch graph.KindOf(id) {
		case graph.KindIdentity:
			ident, err := f.src.FindIdentityByID(ctx, id, graph.IdentityParts{})
			if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
				return err
			}
			if ident != nil {
				x := identityEntry(ident)
				e, k = &x, identityKeys(ident)
			}
		case graph.KindDevice:
			d, err := f.src.FindDeviceByID(ctx, id)
			if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
				return err
			}
			if d != nil {
				x := deviceEntry(d)
				e, k = &x, deviceKeys(d)
				boundTo = d.IdentityID
			}
		}
		upds = append(upds, upd{id, e, k, boundTo})
	}
	f.idx.Lock()
	defer f.idx.Unlock()
	for _, u := range upds {
		i, ok := f.pos[u.id]
		switch {
		case u.ent == nil && ok: // gone: swap-delete
			last := len(f.ent) - 1
			f.ent[i] = f.ent[last]
			f.ids.remove(i)
			f.pos[f.ent[i].id] = i
			f.ent = f.ent[:last]
			delete(f.pos, u.id)
		case u.ent != nil && ok:
			if u.ent.kind == "identity" {
				u.ent.robot = f.ent[i].robot
			}
			f.ent[i] = *u.ent
			f.ids.put(i, u.keys)
		case u.ent != nil:
			f.pos[u.id] = len(f.ent)
			f.ent = append(f.ent, *u.ent)
			f.ids.put(len(f.ent)-1, u.keys)
		}
	}
	// A robot device bound to an identity makes that identity findable as a robot.
	for _, u := range upds {
		if u.ent != nil && u.ent.kind == "device" && u.ent.robot && robotBinds[u.id] && u.boundTo != "" {
			if j, ok := f.pos[u.boundTo]; ok {
				f.ent[j].robot = true
			}
		}
	}
	f.lastSeq = head
	return nil
}

// charMask sets one bit per character class present: a-z, 0-9, other ASCII folded into the
// remaining bits. Non-ASCII characters set no bit (the text's non-ASCII is not filtered on).
func charMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= charBit(s[i])
	}
	return m
}

func charBit(c byte) uint64 {
	switch {
	case c >= 'A' && c <= 'Z':
		return 1 << (c - 'A')
	case c >= 'a' && c <= 'z':
		return 1 << (c - 'a')
	case c >= '0' && c <= '9':
		return 1 << (26 + c - '0')
	case c < utf8.RuneSelf:
		return 1 << (36 + c%27)
	}
	return 0
}

// subsequence reports whether every byte of q appears in s in order (both lowercased).
func subsequence(q, s string) bool {
	j := 0
	for i := 0; i < len(s) && j < len(q); i++ {
		if s[i] == q[j] {
			j++
		}
	}
	return j == len(q)
}

type candSource []*finderEntry

func (c candSource) String(i int) string { return c[i].name }
func (c candSource) Len() int            { return len(c) }

// Find returns the nodes whose names match q.Text best, filtered by tags and kind.
func (f *Finder) Find(ctx context.Context, q graph.FindQuery) ([]graph.FindHit, error) {
	if err := graph.ValidateText("text", q.Text, 0, maxFindTextLen); err != nil {
		return nil, err
	}
	switch q.Kind {
	case "", "identity", "device", "robot":
	default:
		return nil, graph.FieldErrorf(graph.EINVALID, "kind", "kind %q: want identity, device or robot (or none)", q.Kind)
	}
	tags := make([]string, 0, len(q.Tags))
	for _, t := range q.Tags {
		n, err := graph.NormalizeTag(t)
		if err != nil {
			return nil, err
		}
		tags = append(tags, n)
	}
	first := q.First
	if first <= 0 {
		first = 20
	}
	first = min(first, graph.MaxPageSize)
	if err := f.sync(ctx); err != nil {
		return nil, err
	}

	text := strings.TrimSpace(q.Text)
	lower := strings.ToLower(text)
	ascii := true
	for i := 0; i < len(lower); i++ {
		if lower[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	qmask := charMask(lower)

	f.idx.RLock()
	defer f.idx.RUnlock()
	keep := func(e *finderEntry) bool {
		switch q.Kind {
		case "identity", "device":
			if e.kind != q.Kind {
				return false
			}
		case "robot":
			if !e.robot {
				return false
			}
		}
		for _, t := range tags {
			i := sort.SearchStrings(e.tags, t)
			if i == len(e.tags) || e.tags[i] != t {
				return false
			}
		}
		return true
	}
	if text == "" {
		return f.firstByName(keep, first), nil
	}
	var prefix, contains, subseq []*finderEntry
	for i := range f.ent {
		if i&4095 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := &f.ent[i]
		if e.mask&qmask != qmask {
			continue
		}
		switch {
		case strings.HasPrefix(e.lower, lower):
			if !keep(e) {
				continue
			}
			prefix = append(prefix, e)
		case strings.Contains(e.lower, lower):
			if !keep(e) {
				continue
			}
			contains = append(contains, e)
		case len(prefix)+len(contains)+len(subseq) < maxFuzzy && (!ascii || subsequence(lower, e.lower)):
			if !keep(e) {
				continue
			}
			subseq = append(subseq, e)
		}
	}
	cands := make(candSource, 0, min(maxFuzzy, len(prefix)+len(contains)+len(subseq)))
	for _, tier := range [][]*finderEntry{prefix, contains, subseq} {
		for _, e := range tier {
			if len(cands) == maxFuzzy {
				break
			}
			cands = append(cands, e)
		}
	}
	ms := fuzzy.FindFrom(text, cands)
	hits := make([]graph.FindHit, 0, min(first, len(ms)))
	for _, m := range ms {
		if len(hits) == first {
			break
		}
		hits = append(hits, cands[m.Index].hit(m.Score, m.MatchedIndexes))
	}
	return hits, nil
}

func (e *finderEntry) hit(score int, matched []int) graph.FindHit {
	kind := e.kind
	if e.robot {
		kind = "robot"
	}
	if matched == nil {
		matched = []int{}
	}
	return graph.FindHit{ID: e.id, Kind: kind, Name: e.name, Score: score, Matched: append([]int(nil), matched...)}
}

// firstByName keeps the first n entries by name without sorting the whole index.
func (f *Finder) firstByName(keep func(*finderEntry) bool, n int) []graph.FindHit {
	less := func(a, b *finderEntry) bool {
		if a.lower != b.lower {
			return a.lower < b.lower
		}
		return a.id < b.id
	}
	best := make([]*finderEntry, 0, n+1)
	for i := range f.ent {
		e := &f.ent[i]
		if len(best) == n && !less(e, best[n-1]) {
			continue
		}
		if !keep(e) {
			continue
		}
		j := sort.Search(len(best), func(k int) bool { return less(e, best[k]) })
		best = append(best, nil)
		copy(best[j+1:], best[j:])
		best[j] = e
		if len(best) > n {
			best = best[:n]
		}
	}
	out := make([]graph.FindHit, len(best))
	for i, e := range best {
		out[i] = e.hit(0, nil)
	}
	return out
}
