package search

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/devgraph/devgraph/graph"
)

// SuggestID answers a store's "did you mean" for identities and devices from the index
// (see graph.Suggester), by the rules the store used when it looked at its own keys: a
// key within edit distance 1 of local (a shared prefix counting one less), else the
// shortest key containing local (case and separators ignored, at least 3 bytes), else
// a key within about half local's length, else the shortest key holding each of local's
// tokens. Keys are an identity's slug, a device's key and its current ref; a device
// found by its ref is named by that ref. Edit distance is measured, as the store did,
// for the keys either side of where local sorts and, in a kind of at most suggestAll
// keys, for every key; the substring and token checks cover the whole index, each key
// ruled out or in by two masks before any string is compared. Other kinds are left to
// the caller (ok false).
func (f *Finder) SuggestID(ctx context.Context, k graph.Kind, local string) (string, bool) {
	if k != graph.KindIdentity && k != graph.KindDevice {
		return "", false
	}
	if ctx.Value(syncKey{}) == f {
		return "", true // a read of the index's own sync: nobody reads its message
	}
	if err := f.sync(ctx); err != nil {
		return "", false
	}
	f.idx.RLock()
	defer f.idx.RUnlock()
	return f.ids.suggest(k, local), true
}

// syncKey marks the context of the index's own reads: a miss among them (a node deleted
// since the last sync) asks for a suggestion nobody will read, and answering it would
// need the sync it is part of.
type syncKey struct{}

// suggestAll is how many keys of one kind are few enough to measure every one by edit
// distance (the store's budget); above it only the five either side of where the typed
// id would sort are measured.
const suggestAll = 2000

// maxKeyOps is how many key changes are applied one by one to a sorted key list; more,
// and sorting the list afresh is cheaper.
const maxKeyOps = 256

// seps are what "jdxi" may leave out of "roland-jd-xi".
const seps = "-_:./ "

// idIndex holds the keys SuggestID compares typed ids with, at the same positions as the
// index's entries. Its methods other than suggest are called with the index's write lock
// held; suggest with its read lock.
type idIndex struct {
	keys  []idKeys
	masks []keyMasks

	mu     sync.Mutex // guards masks and sorted: suggest makes and updates them
	sorted [3]sortedKeys
}

// The three key lists: identity slugs, device keys, device refs.
const (
	bucketSlugs = iota
	bucketDeviceKeys
	bucketRefs
)

// idKeys is one node's keys: its id's local part (an identity's slug, a device's key)
// and a device's current ref, each also ASCII-lowercased (what the store compared) and
// without separators.
//
// It is kept small (an identity's slug shares its id's bytes; lowercased and bare forms are
// made only for the keys the masks let through): the index holds one per node, and at
// 100,000 identities every byte here is 100 KB of the server's memory: 24 bytes an
// identity.
type idKeys struct {
	key string   // an identity's slug or a device's key
	dev *devKeys // a device's; nil for an identity
}

// devKeys is what only a device has: its current ref ("" when it has none).
type devKeys struct{ ref string }

func (k *idKeys) device() bool { return k.dev != nil }

// ref is a device's current ref, "" for an identity.
func (k *idKeys) ref() string {
	if k.dev == nil {
		return ""
	}
	return k.dev.ref
}

// keyMasks rule keys out before any string is compared: the characters (charMask) and
// the byte pairs (bigramMask, of the bare lowercased form) each key holds. A key that
// contains a text holds all of the text's characters and pairs.
type keyMasks struct {
	key, keyPairs uint64
	ref, refPairs uint64
}

// sortedKeys is one key list in order, with the changes made since it was sorted.
type sortedKeys struct {
	keys  []string
	ops   []keyOp
	valid bool
}

type keyOp struct {
	key string
	add bool
}

func identityKeys(id *graph.Identity) idKeys {
	_, slug, _ := graph.SplitID(id.ID)
	return idKeys{key: slug}
}

func deviceKeys(d *graph.Device) idKeys {
	_, key, _ := graph.SplitID(d.ID)
	return idKeys{key: key, dev: &devKeys{ref: d.Ref}}
}

func (k *idKeys) masks() keyMasks {
	m := keyMasks{key: charMask(k.key), keyPairs: barePairMask(k.key)}
	if ref := k.ref(); ref != "" {
		m.ref, m.refPairs = charMask(ref), barePairMask(ref)
	}
	return m
}

// barePairMask is bigramMask of key's bare lowercased form (see forms), made without
// building that form.
func barePairMask(key string) uint64 {
	var m uint64
	var prev byte
	have := false
	for i := 0; i < len(key); i++ {
		c := key[i]
		if strings.IndexByte(seps, c) >= 0 {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if have {
			m |= 1 << ((uint(prev)*31 + uint(c)) & 63)
		}
		prev, have = c, true
	}
	return m
}

// forms returns key lowercased (A-Z only, as the store compared keys) and that without
// separators, sharing key's bytes where nothing changes.
func forms(key string) (low, bare string) {
	low = lowerASCII(key)
	if strings.ContainsAny(low, seps) {
		return low, string(bareOf(nil, low))
	}
	return low, low
}

// each calls fn with every key of k and the list it belongs to.
func (k *idKeys) each(fn func(bucket int, key string)) {
	switch {
	case !k.device():
		fn(bucketSlugs, k.key)
	default:
		fn(bucketDeviceKeys, k.key)
		if ref := k.ref(); ref != "" {
			fn(bucketRefs, ref)
		}
	}
}

// sortKeys returns the three key lists of keys in order. The lists are sorted the first
// time a suggestion needs them (list), not when the index is built: most servers never
// meet an unknown id, and those that do pay once.
func sortKeys(keys []idKeys) [3]sortedKeys {
	var out [3]sortedKeys
	for i := range keys {
		keys[i].each(func(b int, key string) { out[b].keys = append(out[b].keys, key) })
	}
	for b := range out {
		sort.Strings(out[b].keys)
		out[b].valid = true
	}
	return out
}

// reset replaces every key; the masks and the sorted lists are made again when next
// needed (ensureMasks, list).
func (x *idIndex) reset(keys []idKeys) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.keys = keys
	x.masks = nil
	x.sorted = [3]sortedKeys{}
}

// ensureMasks makes the masks of every key if they are not kept yet: they cost 32 bytes a
// key, so an index that never meets an unknown id never holds them. Call with x.mu held.
func (x *idIndex) ensureMasks() {
	if len(x.masks) == len(x.keys) {
		return
	}
	x.masks = make([]keyMasks, len(x.keys))
	for i := range x.keys {
		x.masks[i] = x.keys[i].masks()
	}
}

// put sets the keys at position i (i == the count appends).
func (x *idIndex) put(i int, k idKeys) {
	x.mu.Lock()
	defer x.mu.Unlock()
	kept := len(x.masks) == len(x.keys) // masks are kept: keep them current
	if i == len(x.keys) {
		x.keys = append(x.keys, k)
		if kept {
			x.masks = append(x.masks, k.masks())
		}
		k.each(x.record(true))
		return
	}
	old := x.keys[i]
	if old.device() == k.device() && old.key == k.key && old.ref() == k.ref() {
		return // a rename or a tag: the keys stay
	}
	old.each(x.record(false))
	k.each(x.record(true))
	x.keys[i] = k
	if kept {
		x.masks[i] = k.masks()
	}
}

// remove deletes the keys at position i, moving the last ones there (as the index moves
// its entries).
func (x *idIndex) remove(i int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.keys[i].each(x.record(false))
	last := len(x.keys) - 1
	if len(x.masks) == len(x.keys) {
		x.masks[i] = x.masks[last]
		x.masks = x.masks[:last]
	}
	x.keys[i] = x.keys[last]
	x.keys = x.keys[:last]
}

func (x *idIndex) record(add bool) func(int, string) {
	return func(b int, key string) {
		s := &x.sorted[b]
		if !s.valid {
			return
		}
		if len(s.ops) == maxKeyOps {
			*s = sortedKeys{} // sorting afresh is cheaper
			return
		}
		s.ops = append(s.ops, keyOp{key, add})
	}
}

// list returns key list b in order, bringing it up to date. Call with x.mu held.
func (x *idIndex) list(b int) []string {
	s := &x.sorted[b]
	if !s.valid {
		all := sortKeys(x.keys)
		for i := range x.sorted {
			if !x.sorted[i].valid {
				x.sorted[i] = all[i]
			}
		}
		return s.keys
	}
	for _, op := range s.ops {
		i := sort.SearchStrings(s.keys, op.key)
		switch {
		case op.add:
			s.keys = append(s.keys, "")
			copy(s.keys[i+1:], s.keys[i:])
			s.keys[i] = op.key
		case i < len(s.keys) && s.keys[i] == op.key:
			s.keys = append(s.keys[:i], s.keys[i+1:]...)
		}
	}
	s.ops = s.ops[:0]
	return s.keys
}

// keyRef is one candidate key and the list it is in.
type keyRef struct {
	bucket int
	key    string
}

// less orders candidates as the store met them: shorter first, then by list, then by key.
func (a keyRef) less(b keyRef) bool {
	if len(a.key) != len(b.key) {
		return len(a.key) < len(b.key)
	}
	if a.bucket != b.bucket {
		return a.bucket < b.bucket
	}
	return a.key < b.key
}

func (x *idIndex) suggest(k graph.Kind, local string) string {
	name := func(c keyRef) string {
		if c.bucket == bucketRefs {
			return c.key // a ref is itself a valid way to name a device
		}
		return string(k) + ":" + c.key
	}
	device := k == graph.KindDevice

	lower := strings.ToLower(local)
	var tokens []string
	for _, t := range strings.FieldsFunc(lower, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if len(t) >= 2 {
			tokens = append(tokens, t)
		}
	}
	if len(tokens) < 2 {
		tokens = nil // one token is the whole text: the substring check covers it
	}
	lowerBare := string(bareOf(nil, lower))
	// A key containing the text (bare or not) holds the bare text's characters and pairs;
	// one holding every token, the tokens'.
	subChars, subPairs := charMask(lowerBare), bigramMask(lowerBare)
	canSub := len(lower) >= 3 || len(lowerBare) >= 3
	var tokChars, tokPairs uint64
	for _, t := range tokens {
		tokChars |= charMask(t)
		tokPairs |= bigramMask(t)
	}
	maybe := func(chars, pairs uint64) bool {
		return canSub && chars&subChars == subChars && pairs&subPairs == subPairs ||
			tokens != nil && chars&tokChars == tokChars && pairs&tokPairs == tokPairs
	}

	var sub, tok keyRef
	hasSub, hasTok := false, false
	contain := func(c keyRef) {
		low, bare := forms(c.key)
		if !hasSub || c.less(sub) {
			if len(lower) >= 3 && strings.Contains(low, lower) || len(lowerBare) >= 3 && strings.Contains(bare, lowerBare) {
				sub, hasSub = c, true
				return
			}
		}
		// Tokens count only when no key contains the whole text.
		if tokens == nil || hasSub || hasTok && !c.less(tok) {
			return
		}
		for _, t := range tokens {
			if !strings.Contains(low, t) {
				return
			}
		}
		tok, hasTok = c, true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ensureMasks()
	for i := range x.masks {
		m := &x.masks[i]
		if !maybe(m.key, m.keyPairs) && !maybe(m.ref, m.refPairs) {
			continue
		}
		ks := &x.keys[i]
		if ks.device() != device {
			continue
		}
		if device {
			contain(keyRef{bucketDeviceKeys, ks.key})
			if ref := ks.ref(); ref != "" {
				contain(keyRef{bucketRefs, ref})
			}
		} else {
			contain(keyRef{bucketSlugs, ks.key})
		}
	}

	// Edit distance, in the order the store measured keys (the five after where local
	// sorts, the five before it, then every key of a small list): at equal distance the
	// first one wins.
	best, bestD := "", 1<<30
	consider := func(b int, key string) {
		d := graph.EditDistance(local, key, bestD)
		if strings.HasPrefix(key, local) || strings.HasPrefix(local, key) {
			d-- // a shared prefix is a strong hint
		}
		if d < bestD {
			best, bestD = name(keyRef{b, key}), d
		}
	}
	buckets := []int{bucketSlugs}
	if device {
		buckets = []int{bucketDeviceKeys, bucketRefs}
	}
	for _, b := range buckets {
		keys := x.list(b)
		at := sort.SearchStrings(keys, local)
		for i := at; i < at+5 && i < len(keys); i++ {
			consider(b, keys[i])
		}
		for i := at - 1; i >= at-5 && i >= 0; i-- {
			consider(b, keys[i])
		}
		if len(keys) <= suggestAll {
			for _, key := range keys {
				consider(b, key)
			}
		}
	}
	switch {
	case bestD <= 1 && best != "":
		return best // a typo or a prefix
	case hasSub:
		return name(sub)
	case bestD <= len(local)/2+2 && best != "":
		return best
	case hasTok:
		return name(tok)
	}
	return ""
}

// lowerASCII lowercases A-Z only (what the store's key comparison did), sharing s when
// it has none.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func bareOf(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(seps, rune(s[i])) {
			dst = append(dst, s[i])
		}
	}
	return dst
}

// bigramMask sets one of 64 bits per pair of adjacent bytes in s.
func bigramMask(s string) uint64 {
	var m uint64
	for i := 0; i+1 < len(s); i++ {
		m |= 1 << ((uint(s[i])*31 + uint(s[i+1])) & 63)
	}
	return m
}
