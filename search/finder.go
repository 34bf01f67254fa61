package search

import (
	"context"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"

	"github.com/devgraph/devgraph/graph"
)

// Finder is an in-memory index of identity and device names for fuzzy search. Running
// sahilm/fuzzy over 100,000 names costs tens of milliseconds, so Finder keeps each name
// lowercased with masks of the characters it holds (once, twice, three times or more):
// a name lacking any character of the text, or holding one fewer times than the text
// does, is ruled out by ANDing a few bitmaps before any string is looked at; names that
// contain the text (as a prefix, then anywhere) are preferred, and fuzzy scores at most
// maxFuzzy candidates.
//
// The index is built on first use and kept current from the changelog: every Find reads
// the changelog head (one cheap read) and, when the log has grown, re-reads only the
// nodes the new events touched. Reading the log rather than waiting for change
// notifications (which arrive asynchronously) means a Find right after a write sees it.
// Safe for concurrent use.
//
// Over a store (a graph.NameIndex) the index is built from the store's name index
// without decoding an identity, follows the changelog by the new events' headers only,
// reads display names only for the candidates a search ranks, and reads the tag index
// on the first search by tag (or in Warm). Over any other NameSource it reads whole
// records, as it did before.
type Finder struct {
	src  graph.NameSource
	fast graph.NameIndex // src's fast path; nil when it has none

	mu      sync.Mutex // guards the fields below and serialises syncs
	built   bool
	lastSeq uint64 // newest changelog seq the index reflects

	tagsMu sync.Mutex // serialises loadTags

	found     chan struct{} // closed when a first Find has returned
	foundOnce sync.Once

	idx       sync.RWMutex
	ent       []finderEntry
	masks     []classSet           // beside ent: each entry's masks
	classes   [levels][64][]uint64 // per level and mask bit, a bitmap of the entries whose names have it
	ids       idIndex              // beside ent (same positions): what SuggestID compares typed ids with
	pos       map[string]int       // id → index in ent and ids; nil until needed (see ensurePos)
	gen       uint64               // counts installs: a pos built from an older ent is dropped
	tagsReady bool                 // identities' tags are in ent (always, without the fast path)
}

// finderEntry is one node of the index. Its masks are beside it in Finder.masks. It is
// kept small (48 bytes): a server builds 100,000 of them before its first find, and
// the memory it touches first is most of that wait. What an entry built from the
// store's name index does not know yet (its display name, its tags) is behind more.
type finderEntry struct {
	id    string
	lower string
	more  *entryMore // nil while neither is known; replaced, never changed in place
	kind  nodeKind
	robot bool
}

// entryMore is an entry's display name ("" while not read) and sorted tags.
type entryMore struct {
	name string
	tags []string
}

func (e *finderEntry) name() string {
	if e.more == nil {
		return ""
	}
	return e.more.name
}

func (e *finderEntry) tags() []string {
	if e.more == nil {
		return nil
	}
	return e.more.tags
}

// setName gives the entry its display name, keeping its tags.
func (e *finderEntry) setName(name string) {
	e.more = &entryMore{name: name, tags: e.tags()}
}

// nodeKind is an entry's kind.
type nodeKind uint8

const (
	kindIdentity nodeKind = iota
	kindDevice
)

func (k nodeKind) String() string {
	if k == kindDevice {
		return "device"
	}
	return "identity"
}

// levels is how many times over a character class is counted: a classSet's level k
// holds the classes a name has at least k+1 times.
const levels = 3

type classSet [levels]uint64

// classesOf is the classSet of a name: level 0 is charMask(name) (the name as written,
// or lowercased), the higher levels count the lowercased name's bytes.
func classesOf(name, lower string) classSet {
	if name == lower {
		one, two, three := countMasks(lower)
		return classSet{one, two, three}
	}
	_, two, three := countMasks(lower)
	return classSet{charMask(name), two, three}
}

// repeatMasks are the character classes s holds at least twice and at least three
// times.
func repeatMasks(s string) (two, three uint64) {
	_, two, three = countMasks(s)
	return two, three
}

// countMasks are the character classes s holds at least once, twice and three times.
func countMasks(s string) (one, two, three uint64) {
	for i := 0; i < len(s); i++ {
		b := charBits[s[i]]
		three |= two & b
		two |= one & b
		one |= b
	}
	return one, two, three
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
	fast, _ := src.(graph.NameIndex)
	return &Finder{src: src, fast: fast, found: make(chan struct{})}
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

// Build builds the index if it is not built yet (else catches it up with the
// changelog), so that a search after it waits for nothing.
func (f *Finder) Build(ctx context.Context) error {
	return f.sync(ctx)
}

// Found is closed once a first Find has been answered (its answer sent, where the edge
// serving it says when: graph.AfterAnswer), or has returned: a server warms the rest
// (Warm) after it, so that the work competes neither with the first search nor with
// sending its answer.
func (f *Finder) Found() <-chan struct{} { return f.found }

// Warm builds the index if it is not built yet, then what a search otherwise builds
// when it first needs it (the id → position map a change needs, the tags a search by
// tag needs), so no search waits for them; a server calls it in the background at
// start.
func (f *Finder) Warm(ctx context.Context) error {
	if err := f.sync(ctx); err != nil {
		return err
	}
	f.warmPos()
	return f.loadTags(ctx)
}

func (f *Finder) headSeq(ctx context.Context) (uint64, error) {
	evs, _, err := f.src.FindEvents(ctx, graph.EventFilter{First: 1})
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	return evs[0].Seq, nil
}

func (f *Finder) rebuildLocked(ctx context.Context) error {
	var head uint64
	if f.fast != nil {
		// The devices and the names from one snapshot, whose changelog head is head.
		if rv, ok := f.src.(graph.ReadViewer); ok {
			view, release, err := rv.BeginRead(ctx)
			if err != nil {
				return err
			}
			defer release()
			ctx = view
		}
	} else {
		var err error
		if head, err = f.headSeq(ctx); err != nil {
			return err
		}
	}
	ctx = context.WithValue(ctx, syncKey{}, f)
	var ents []finderEntry
	var masks []classSet
	var keys []idKeys
	robots := map[string]bool{}
	after := ""
	for {
		devs, _, next, err := f.src.FindDevices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize, After: after})
		if err != nil {
			return err
		}
		for _, d := range devs {
			e, m := deviceEntry(d)
			ents, masks = append(ents, e), append(masks, m)
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
	if f.fast != nil {
		var err error
		head, err = f.fast.EachIdentityName(ctx, func(total int) { // room for every identity
			ents, masks, keys = slices.Grow(ents, total+16), slices.Grow(masks, total+16), slices.Grow(keys, total+16)
		}, func(n graph.NameKey) {
			ents = append(ents, finderEntry{id: n.ID, kind: kindIdentity, robot: robots[n.ID], lower: n.Lower})
			masks = append(masks, classesOf(n.Lower, n.Lower))
			keys = append(keys, idKeys{key: n.ID[len("identity:"):]})
		})
		if err != nil {
			return err
		}
		return f.install(ents, masks, keys, head, false)
	}
	after = ""
	for {
		ids, _, next, err := f.src.FindIdentities(ctx, graph.IdentityFilter{First: graph.MaxPageSize, After: after})
		if err != nil {
			return err
		}
		for _, id := range ids {
			e, m := identityEntry(id)
			e.robot = robots[id.ID]
			ents, masks = append(ents, e), append(masks, m)
			keys = append(keys, identityKeys(id))
		}
		if next == "" || len(ids) == 0 {
			break
		}
		after = next
	}
	return f.install(ents, masks, keys, head, true)
}

// install makes ents (with their masks at the same positions) the index, as of
// changelog seq head. The id → position map is
// left to the first change to apply, or to Warm: at 100,000 identities it costs as much
// as the rest of the build, and a first search needs none of it.
func (f *Finder) install(ents []finderEntry, masks []classSet, keys []idKeys, head uint64, tagsReady bool) error {
	// The bitmaps are made before the index is held: a search meanwhile goes on.
	words := (len(ents) + 63) / 64
	var classes [levels][64][]uint64
	all := make([]uint64, levels*64*words) // one allocation; each bitmap may grow apart (mark)
	for l := range classes {
		for b := range classes[l] {
			k := (l*64 + b) * words
			classes[l][b] = all[k : k+words : k+words]
		}
	}
	fillClasses(&classes, masks)
	f.idx.Lock()
	f.ent, f.masks, f.classes, f.pos, f.tagsReady = ents, masks, classes, nil, tagsReady
	f.gen++
	f.ids.reset(keys)
	f.idx.Unlock()
	f.built, f.lastSeq = true, head
	return nil
}

// fillClasses sets each entry's bit in the bitmap of each class of its masks. Setting the
// bits entry by entry writes all over the bitmaps (2.4 MB at 100,000 entries, beyond the
// processor's cache); this gathers 64 entries' bits (one word of every bitmap) in a small
// array that stays in the cache, then stores the words that are not zero. Two goroutines
// share a large index's words, each word written by one of them.
func fillClasses(classes *[levels][64][]uint64, masks []classSet) {
	fill := func(w0, w1 int) {
		for w := w0; w < w1; w++ {
			var acc [levels][64]uint64
			for j, m := range masks[w*64 : min(w*64+64, len(masks))] {
				bit := uint64(1) << j
				for l := range m {
					for x := m[l]; x != 0; x &= x - 1 {
						acc[l][bits.TrailingZeros64(x)] |= bit
					}
				}
			}
			for l := range acc {
				for b, x := range acc[l] {
					if x != 0 {
						classes[l][b][w] = x
					}
				}
			}
		}
	}
	words := (len(masks) + 63) / 64
	if words < 256 { // under 16,384 entries: not worth a goroutine
		fill(0, words)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { fill(words/2, words) })
	fill(0, words/2)
	wg.Wait()
}

// ensurePosLocked builds the id → position map; the index's write lock is held.
func (f *Finder) ensurePosLocked() {
	if f.pos == nil {
		f.pos = positions(f.ent)
	}
}

func positions(ents []finderEntry) map[string]int {
	pos := make(map[string]int, len(ents))
	for i := range ents {
		pos[ents[i].id] = i
	}
	return pos
}

// warmPos builds the id → position map without holding the index while it does.
func (f *Finder) warmPos() {
	f.idx.RLock()
	if f.pos != nil {
		f.idx.RUnlock()
		return
	}
	ids, gen := make([]string, len(f.ent)), f.gen
	for i := range f.ent {
		ids[i] = f.ent[i].id
	}
	f.idx.RUnlock()
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	// Positions change only through a change applied, which builds pos first, or an
	// install, which counts gen.
	f.idx.Lock()
	if f.pos == nil && f.gen == gen {
		f.pos = pos
	}
	f.idx.Unlock()
}

func identityEntry(id *graph.Identity) (finderEntry, classSet) {
	lower := strings.ToLower(id.Name)
	return finderEntry{id: id.ID, kind: kindIdentity, lower: lower, more: &entryMore{name: id.Name, tags: sortedCopy(id.Tags)}}, classesOf(id.Name, lower)
}

func deviceEntry(d *graph.Device) (finderEntry, classSet) {
	lower := strings.ToLower(d.Name)
	return finderEntry{id: d.ID, kind: kindDevice, robot: d.Source == "robot", lower: lower, more: &entryMore{name: d.Name, tags: sortedCopy(d.Tags)}}, classesOf(d.Name, lower)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// sync brings the index up to date before a search: it reads the events written since the
// last sync and re-reads the nodes they touched.
func (f *Finder) sync(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncLocked(ctx)
}

// touches reports whether an event of this action may change what the index holds of
// its target (name, tags, being a robot); notes, relations, hints and robot commands
// cannot.
func touches(action string) bool {
	for _, p := range []string{"note.", "relation.", "hint.", "robot.", "changelog."} {
		if strings.HasPrefix(action, p) {
			return false
		}
	}
	return true
}

func (f *Finder) syncLocked(ctx context.Context) error {
	if !f.built {
		return f.rebuildLocked(ctx)
	}
	touched := map[string]bool{}
	robotBinds := map[string]bool{} // devices bound or unbound: their identity may have become a robot
	var head uint64
	if f.fast != nil {
		changes, h, complete, err := f.fast.ChangesSince(ctx, f.lastSeq, maxPending)
		if err != nil {
			return err
		}
		if !complete {
			return f.rebuildLocked(ctx)
		}
		if h <= f.lastSeq {
			return nil // nothing new, or ctx reads an older snapshot (see below)
		}
		head = h
		for _, c := range changes {
			switch graph.KindOf(c.Target) {
			case graph.KindIdentity, graph.KindDevice:
				if touches(c.Action) {
					touched[c.Target] = true
				}
			}
			if c.Action == graph.ActDeviceBind || c.Action == graph.ActDeviceUnbind {
				robotBinds[c.Target] = true
			}
		}
	} else {
		h, err := f.headSeq(ctx)
		if err != nil {
			return err
		}
		if h == f.lastSeq {
			return nil
		}
		if h < f.lastSeq {
			// ctx reads an older snapshot (a query's read view begun before the index's
			// last sync): the index is newer already; rebuilding it from the old view would
			// only send it back (and a later sync forward again).
			return nil
		}
		if h-f.lastSeq > maxPending {
			return f.rebuildLocked(ctx)
		}
		head = h
		after := ""
	scan:
		for {
			evs, next, err := f.src.FindEvents(context.WithValue(ctx, syncKey{}, f), graph.EventFilter{First: graph.MaxPageSize, After: after})
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
	}
	ctx = context.WithValue(ctx, syncKey{}, f)
	ids := make([]string, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	type upd struct {
		id      string
		ent     *finderEntry
		mask    classSet
		keys    idKeys
		boundTo string
	}
	var upds []upd
	for _, id := range ids {
		var e *finderEntry
		var mask classSet
		var k idKeys
		boundTo := ""
		switch graph.KindOf(id) {
		case graph.KindIdentity:
			ident, err := f.src.FindIdentityByID(ctx, id, graph.IdentityParts{})
			if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
				return err
			}
			if ident != nil {
				x, m := identityEntry(ident)
				e, mask, k = &x, m, identityKeys(ident)
			}
		case graph.KindDevice:
			d, err := f.src.FindDeviceByID(ctx, id)
			if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
				return err
			}
			if d != nil {
				x, m := deviceEntry(d)
				e, mask, k = &x, m, deviceKeys(d)
				boundTo = d.IdentityID
			}
		}
		upds = append(upds, upd{id, e, mask, k, boundTo})
	}
	f.idx.Lock()
	defer f.idx.Unlock()
	f.ensurePosLocked()
	for _, u := range upds {
		i, ok := f.pos[u.id]
		switch {
		case u.ent == nil && ok: // gone: swap-delete
			last := len(f.ent) - 1
			f.mark(i, f.masks[i], false)
			if i != last {
				f.mark(last, f.masks[last], false)
				f.mark(i, f.masks[last], true)
			}
			f.ent[i] = f.ent[last]
			f.masks[i] = f.masks[last]
			f.masks = f.masks[:last]
			f.ids.remove(i)
			f.pos[f.ent[i].id] = i
			f.ent = f.ent[:last]
			delete(f.pos, u.id)
		case u.ent != nil && ok:
			if u.ent.kind == kindIdentity {
				u.ent.robot = f.ent[i].robot
			}
			f.mark(i, f.masks[i], false)
			f.mark(i, u.mask, true)
			f.ent[i] = *u.ent
			f.masks[i] = u.mask
			f.ids.put(i, u.keys)
		case u.ent != nil:
			f.pos[u.id] = len(f.ent)
			f.ent = append(f.ent, *u.ent)
			f.masks = append(f.masks, u.mask)
			f.mark(len(f.masks)-1, u.mask, true)
			f.ids.put(len(f.ent)-1, u.keys)
		}
	}
	// A robot device bound to an identity makes that identity findable as a robot.
	for _, u := range upds {
		if u.ent != nil && u.ent.kind == kindDevice && u.ent.robot && robotBinds[u.id] && u.boundTo != "" {
			if j, ok := f.pos[u.boundTo]; ok {
				f.ent[j].robot = true
			}
		}
	}
	f.lastSeq = head
	return nil
}

// loadTags reads the identities' tags from the store's tag index, once. It reads
// without holding the index (a search meanwhile goes on), then leaves out the nodes that
// events after its read touched: the sync that saw those events re-read them whole.
func (f *Finder) loadTags(ctx context.Context) error {
	f.tagsMu.Lock()
	defer f.tagsMu.Unlock()
	f.idx.RLock()
	ready := f.tagsReady
	f.idx.RUnlock()
	if ready || f.fast == nil {
		return nil
	}
	// Its own read view: ctx may carry a query's older one.
	fresh := context.WithValue(context.WithoutCancel(ctx), syncKey{}, f)
	fresh, cancel := context.WithCancel(fresh)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	tags, at, err := f.fast.NodeTags(fresh)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.syncLocked(fresh); err != nil {
		return err
	}
	changes, _, complete, err := f.fast.ChangesSince(fresh, at, maxPending)
	if err != nil {
		return err
	}
	if !complete {
		return graph.Errorf(graph.EUNAVAILABLE, "the changelog moved on too far while the tags were read; try again")
	}
	skip := map[string]bool{}
	for _, c := range changes {
		skip[c.Target] = true
	}
	f.idx.Lock()
	defer f.idx.Unlock()
	if f.tagsReady { // a rebuild without the fast path
		return nil
	}
	more := make([]entryMore, len(f.ent)) // one allocation for every identity's
	for i := range f.ent {
		e := &f.ent[i]
		if e.kind == kindIdentity && !skip[e.id] {
			more[i] = entryMore{name: e.name(), tags: tags[e.id]}
			e.more = &more[i]
		}
	}
	f.tagsReady = true
	return nil
}

// displayNames fills in the names of the entries the index holds only lowercased,
// reading them from the store; it is called without the index held and re-checks each
// entry before it writes.
func (f *Finder) displayNames(ctx context.Context, es []unread) error {
	ids := make([]string, len(es))
	for j, e := range es {
		ids[j] = e.id
	}
	names, err := f.fast.IdentityDisplayNames(context.WithValue(ctx, syncKey{}, f), ids)
	if err != nil {
		return err
	}
	f.idx.Lock()
	defer f.idx.Unlock()
	for j, u := range es {
		if u.at >= len(f.ent) || names[j] == "" {
			continue
		}
		// The entry may have moved since (a delete swaps the last one in), and ctx may
		// read an older snapshot: only the entry's own current name is written.
		if e := &f.ent[u.at]; e.id == u.id && e.name() == "" && strings.ToLower(names[j]) == e.lower {
			e.setName(names[j])
		}
	}
	return nil
}

// mark sets (or clears) entry i's bit in the bitmap of each class of each level of mask.
func (f *Finder) mark(i int, mask classSet, on bool) {
	w, bit := i/64, uint64(1)<<(i%64)
	for l := range mask {
		for m := mask[l]; m != 0; m &= m - 1 {
			c := &f.classes[l][bits.TrailingZeros64(m)]
			for len(*c) <= w {
				*c = append(*c, 0)
			}
			if on {
				(*c)[w] |= bit
			} else {
				(*c)[w] &^= bit
			}
		}
	}
}

// having yields, in order, the positions of the entries whose masks hold all of q, level
// by level: the AND of a few bitmaps instead of a look at every entry. It works a block
// of words at a time, sparsest bitmaps (the highest level) first, and leaves a block as
// soon as nothing in it is left.
func (f *Finder) having(q classSet) func(func(int) bool) {
	var maps [levels * 64][]uint64
	k := 0
	for l := levels - 1; l >= 0; l-- {
		for m := q[l]; m != 0; m &= m - 1 {
			maps[k] = f.classes[l][bits.TrailingZeros64(m)]
			k++
		}
	}
	n := len(f.masks)
	words := (n + 63) / 64
	return func(yield func(int) bool) {
		const block = 16
		var acc [block]uint64
		for w0 := 0; w0 < words; w0 += block {
			a := acc[:min(block, words-w0)]
			for i := range a {
				a[i] = ^uint64(0)
			}
			if w0+len(a) == words && n%64 != 0 {
				a[len(a)-1] = 1<<(n%64) - 1
			}
			for _, c := range maps[:k] {
				var left uint64
				for i := range a {
					if w := w0 + i; w < len(c) {
						a[i] &= c[w]
					} else {
						a[i] = 0
					}
					left |= a[i]
				}
				if left == 0 {
					break
				}
			}
			for i, x := range a {
				for ; x != 0; x &= x - 1 {
					if !yield((w0+i)*64 + bits.TrailingZeros64(x)) {
						return
					}
				}
			}
		}
	}
}

// charMask sets one bit per character class present: a-z, 0-9, other ASCII folded into the
// remaining bits. Non-ASCII characters set no bit (the text's non-ASCII is not filtered on).
func charMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= charBits[s[i]]
	}
	return m
}

// charBits is charBit of every byte.
var charBits = func() (t [256]uint64) {
	for c := range t {
		t[c] = charBit(byte(c))
	}
	return t
}()

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

func (c candSource) String(i int) string { return c[i].display() }
func (c candSource) Len() int            { return len(c) }

// Find returns the nodes whose names match q.Text best, filtered by tags and kind.
func (f *Finder) Find(ctx context.Context, q graph.FindQuery) ([]graph.FindHit, error) {
	if err := graph.ValidateText("text", q.Text, 0, maxFindTextLen); err != nil {
		return nil, err
	}
	only, ok := kindFilterOf(q.Kind)
	if !ok {
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
	defer graph.AfterAnswer(ctx, func() { f.foundOnce.Do(func() { close(f.found) }) })

	text := strings.TrimSpace(q.Text)
	lower := strings.ToLower(text)
	ascii := true
	for i := 0; i < len(lower); i++ {
		if lower[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	qmask := classSet{charMask(lower)}
	if ascii {
		// An ASCII text matches only names holding it as a subsequence, so only names
		// holding each of its characters at least as often as it does.
		qmask[1], qmask[2] = repeatMasks(lower)
	}
	if len(tags) > 0 {
		f.idx.RLock()
		ready := f.tagsReady
		f.idx.RUnlock()
		if !ready {
			if err := f.loadTags(ctx); err != nil {
				return nil, err
			}
		}
	}
	s := &search{text: text, lower: lower, ascii: ascii, qmask: qmask, only: only, tags: tags, first: first}
	// Names the index holds only lowercased are read for the candidates a search ranks,
	// and the search run again with them (a third run, after a racing change, ranks the
	// lowercased name).
	for attempt := 0; ; attempt++ {
		hits, missing, err := f.search(ctx, s, attempt == 2)
		if err != nil || len(missing) == 0 {
			return hits, err
		}
		if err := f.displayNames(ctx, missing); err != nil {
			return nil, err
		}
	}
}

// search is one Find's query, normalised.
type search struct {
	text, lower string
	ascii       bool
	qmask       classSet
	only        kindFilter
	tags        []string
	first       int
}

// kindFilter is a query's kind as keep compares it: with byKind, the entries of kind
// alone; with robots, robots alone.
type kindFilter struct {
	byKind, robots bool
	kind           nodeKind
}

// kindFilterOf converts a query's kind ("" for any); false for one Find does not know.
func kindFilterOf(kind string) (kindFilter, bool) {
	switch kind {
	case "":
		return kindFilter{}, true
	case "identity":
		return kindFilter{byKind: true, kind: kindIdentity}, true
	case "device":
		return kindFilter{byKind: true, kind: kindDevice}, true
	case "robot":
		return kindFilter{robots: true}, true
	}
	return kindFilter{}, false
}

func (s *search) keep(e *finderEntry) bool {
	if (s.only.byKind && e.kind != s.only.kind) || (s.only.robots && !e.robot) {
		return false
	}
	tags := e.tags()
	for _, t := range s.tags {
		i := sort.SearchStrings(tags, t)
		if i == len(tags) || tags[i] != t {
			return false
		}
	}
	return true
}

// search ranks the index for s. When a candidate's display name has not been read yet
// it returns the ids to read instead of hits, unless final.
func (f *Finder) search(ctx context.Context, s *search, final bool) ([]graph.FindHit, []unread, error) {
	f.idx.RLock()
	defer f.idx.RUnlock()
	if s.text == "" {
		best := f.firstByName(s.keep, s.first)
		if missing := f.unnamed(best); len(missing) > 0 && !final {
			return nil, missing, nil
		}
		out := make([]graph.FindHit, len(best))
		for j, i := range best {
			out[j] = f.ent[i].hit(0, nil)
			f.withTags(&out[j], &f.ent[i])
		}
		return out, nil, nil
	}
	var prefix, contains, subseq []int
	lower, qmask := s.lower, s.qmask
scan:
	for i := range f.having(qmask) {
		if i&4095 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		e := &f.ent[i]
		switch {
		case strings.HasPrefix(e.lower, lower):
			if !s.keep(e) {
				continue
			}
			prefix = append(prefix, i)
			if len(prefix) == maxFuzzy {
				break scan // the candidates are these: the prefix tier comes first
			}
		case strings.Contains(e.lower, lower):
			if !s.keep(e) {
				continue
			}
			contains = append(contains, i)
		case len(prefix)+len(contains)+len(subseq) < maxFuzzy && (!s.ascii || subsequence(lower, e.lower)):
			if !s.keep(e) {
				continue
			}
			subseq = append(subseq, i)
		}
	}
	picked := make([]int, 0, min(maxFuzzy, len(prefix)+len(contains)+len(subseq)))
	for _, tier := range [][]int{prefix, contains, subseq} {
		picked = append(picked, tier[:min(len(tier), maxFuzzy-len(picked))]...)
	}
	if missing := f.unnamed(picked); len(missing) > 0 && !final {
		return nil, missing, nil
	}
	cands := make(candSource, len(picked))
	for j, i := range picked {
		cands[j] = &f.ent[i]
	}
	ms := best(scoreAll(s.text, cands), s.first)
	hits := make([]graph.FindHit, 0, min(s.first, len(ms)))
	for _, m := range ms {
		if len(hits) == s.first {
			break
		}
		hits = append(hits, cands[m.Index].hit(m.Score, m.MatchedIndexes))
		f.withTags(&hits[len(hits)-1], cands[m.Index])
	}
	return hits, nil, nil
}

// scoreAll is fuzzy.FindFromNoSort(pattern, cands), with each shape of name scored
// once. sahilm/fuzzy sees a byte that matches no character of the pattern only as
// lower case, upper case, separator or other (what comes before a match earns a
// bonus or not), and the length; so two ASCII names that differ only in such bytes
// within one class ("Korg Drum Machine 000025" and "… 004177" for "korg drum machine")
// get the same score and matched indexes. The first name of each shape is scored; the
// others take its match.
func scoreAll(pattern string, cands candSource) fuzzy.Matches {
	var inPattern [128]bool // the bytes equal to a pattern character, case folded
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == 0 || c >= utf8.RuneSelf {
			return fuzzy.FindFromNoSort(pattern, cands)
		}
		inPattern[c] = true
		switch {
		case c >= 'a' && c <= 'z':
			inPattern[c-'a'+'A'] = true
		case c >= 'A' && c <= 'Z':
			inPattern[c-'A'+'a'] = true
		}
	}
	shapes := make(map[string]int, 16) // shape → its first name's place in reps
	of := make([]int, len(cands))      // each candidate's place in reps
	var reps candSource
	var buf []byte
	for i, e := range cands {
		var ok bool
		buf, ok = shapeOf(buf[:0], e.display(), &inPattern)
		if ok {
			if r, seen := shapes[string(buf)]; seen {
				of[i] = r
				continue
			}
			shapes[string(buf)] = len(reps)
		}
		of[i] = len(reps)
		reps = append(reps, e)
	}
	if len(reps) == len(cands) {
		return fuzzy.FindFromNoSort(pattern, cands)
	}
	ms := fuzzy.FindFromNoSort(pattern, reps)
	matchOf := make([]int, len(reps)) // reps' places in ms, -1 where no match
	for j := range matchOf {
		matchOf[j] = -1
	}
	for j, m := range ms {
		matchOf[m.Index] = j
	}
	out := make(fuzzy.Matches, 0, len(cands))
	for i, r := range of {
		if j := matchOf[r]; j >= 0 {
			m := ms[j] // its MatchedIndexes shared: hit copies them
			m.Str, m.Index = cands[i].display(), i
			out = append(out, m)
		}
	}
	return out
}

// shapeOf appends to dst the shape of name for scoreAll: the bytes in the pattern as
// they are, every other byte as its class. ok is false for a name sahilm/fuzzy reads
// otherwise (non-ASCII, which it decodes as runes and folds, or a NUL, where it stops).
func shapeOf(dst []byte, name string, inPattern *[128]bool) (_ []byte, ok bool) {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == 0 || c >= utf8.RuneSelf:
			return dst, false
		case inPattern[c]:
		case c >= 'a' && c <= 'z':
			c = 1
		case c >= 'A' && c <= 'Z':
			c = 2
		case strings.IndexByte("/-_ .\\", c) >= 0: // sahilm/fuzzy's separators
			c = 3
		default:
			c = 4
		}
		dst = append(dst, c)
	}
	return dst, true
}

// best returns the first n of ms in the order fuzzy.FindFrom gives them (by score,
// highest first, ties in ms's order; sort.Stable) without sorting all of ms: a search
// shows a page of at most MaxPageSize of up to maxFuzzy matches.
func best(ms fuzzy.Matches, n int) fuzzy.Matches {
	if n >= len(ms)/4 {
		sort.Stable(ms)
		return ms[:min(n, len(ms))]
	}
	top := make(fuzzy.Matches, 0, n+1)
	for _, m := range ms {
		if len(top) == n && m.Score <= top[n-1].Score {
			continue
		}
		// After every match of a score at least m's: the order of arrival among ties.
		j := sort.Search(len(top), func(k int) bool { return top[k].Score < m.Score })
		top = append(top, fuzzy.Match{})
		copy(top[j+1:], top[j:])
		top[j] = m
		if len(top) > n {
			top = top[:n]
		}
	}
	return top
}

// withTags gives a hit its node's tags once the index holds every node's tags.
func (f *Finder) withTags(h *graph.FindHit, e *finderEntry) {
	if f.tagsReady {
		h.Tags = append(make([]string, 0, len(e.tags())), e.tags()...)
	}
}

// unnamed returns the entries at is whose display names have not been read.
func (f *Finder) unnamed(is []int) []unread {
	var out []unread
	for _, i := range is {
		if e := &f.ent[i]; e.name() == "" && e.lower != "" {
			out = append(out, unread{i, e.id})
		}
	}
	return out
}

// unread is an entry whose display name is to be read: its position and id.
type unread struct {
	at int
	id string
}

// display is the entry's name as people wrote it, or lowercased while that is unread.
func (e *finderEntry) display() string {
	if name := e.name(); name != "" {
		return name
	}
	return e.lower
}

func (e *finderEntry) hit(score int, matched []int) graph.FindHit {
	kind := e.kind.String()
	if e.robot {
		kind = "robot"
	}
	if matched == nil {
		matched = []int{}
	}
	return graph.FindHit{ID: e.id, Kind: kind, Name: e.display(), Score: score, Matched: append([]int(nil), matched...)}
}

// firstByName keeps the first n entries by name without sorting the whole index.
func (f *Finder) firstByName(keep func(*finderEntry) bool, n int) []int {
	less := func(a, b *finderEntry) bool {
		if a.lower != b.lower {
			return a.lower < b.lower
		}
		return a.id < b.id
	}
	best := make([]int, 0, n+1)
	for i := range f.ent {
		e := &f.ent[i]
		if len(best) == n && !less(e, &f.ent[best[n-1]]) {
			continue
		}
		if !keep(e) {
			continue
		}
		j := sort.Search(len(best), func(k int) bool { return less(e, &f.ent[best[k]]) })
		best = append(best, 0)
		copy(best[j+1:], best[j:])
		best[j] = i
		if len(best) > n {
			best = best[:n]
		}
	}
	return best
}
