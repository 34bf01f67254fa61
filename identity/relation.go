package identity

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// Relations on the service: declared ones live in the store (graph.RelationStore), observed
// ones and clients in the live snapshot. A node's relations are those of its vertex — a
// bound identity and its present devices are one thing — so a cable declared on the
// JD-Xi's identity shows on usb:3-3.2 while it is plugged in, and the JD-Xi's observed
// sequencer subscription shows on the identity.

// relStore is the store's side of relations: declared ones only.
func (s *Service) relStore() (graph.RelationStore, error) { return s.store, nil }

// liveView is what one request knows of the live side: the snapshot's observed relations
// and clients, and the bindings of the present devices (explicit, or a high unambiguous
// match: DeviceView.BoundTo).
type liveView struct {
	snap    *graph.Snapshot
	clients map[string]*graph.Client
	obs     []*graph.Relation            // sorted by id
	obsByID map[string]*graph.Relation   //
	obsOf   map[string][]*graph.Relation // node → observed relations touching it, by id
	boundOf map[string]string            // present bound device → its identity
	members map[string][]string          // identity → its present bound devices, sorted
	names   map[string]string            // present devices and bound identities → name
	infra   map[string]bool              // present infrastructure devices (hubs, root hubs)
}

// live reads the snapshot (observing it like every live read) and the bindings.
func (s *Service) live(ctx context.Context) (*liveView, error) {
	snap, err := s.sync(ctx)
	if err != nil {
		return nil, err
	}
	return s.liveOf(ctx, snap)
}

// liveOf reads the bindings against snap (nil: no hardware in this process), without
// reading the hardware again.
func (s *Service) liveOf(ctx context.Context, snap *graph.Snapshot) (*liveView, error) {
	var err error
	snap = s.withFleet(snap)
	w := &liveView{
		snap:    snap,
		clients: map[string]*graph.Client{},
		obsByID: map[string]*graph.Relation{},
		obsOf:   map[string][]*graph.Relation{},
		boundOf: map[string]string{},
		members: map[string][]string{},
		names:   map[string]string{},
		infra:   map[string]bool{},
	}
	if snap != nil {
		for _, c := range snap.Clients {
			if c != nil {
				w.clients[c.ID] = c
			}
		}
		for _, r := range snap.Relations {
			if r == nil || w.obsByID[r.ID] != nil {
				continue
			}
			w.obsByID[r.ID] = r
			w.obs = append(w.obs, r)
		}
		sort.Slice(w.obs, func(i, j int) bool { return w.obs[i].ID < w.obs[j].ID })
		for _, r := range w.obs {
			w.obsOf[r.From] = append(w.obsOf[r.From], r)
			if r.To != r.From {
				w.obsOf[r.To] = append(w.obsOf[r.To], r)
			}
		}
	}
	devs, err := s.allDevices(ctx, graph.DeviceFilter{})
	if err != nil {
		return nil, err
	}
	sc := sceneOf(snap, devs)
	views, err := s.views(ctx, sc, devs)
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		w.names[v.ID] = v.Name
		if v.Infra {
			w.infra[v.ID] = true
		}
		if !v.Present || v.HostOffline || v.BoundTo == "" {
			continue
		}
		w.boundOf[v.ID] = v.BoundTo
		w.members[v.BoundTo] = append(w.members[v.BoundTo], v.ID)
		if v.Identity != "" {
			w.names[v.BoundTo] = v.Identity
		}
	}
	for _, m := range w.members {
		sort.Strings(m)
	}
	return w, nil
}

// readLive observes the hardware once, then opens one read view and reads the live side
// inside it: the store, the snapshot and the bindings read through the returned context
// are one consistent state. Call release when done.
func (s *Service) readLive(ctx context.Context) (context.Context, *liveView, func(), error) {
	snap, err := s.sync(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	vctx, release, err := s.BeginRead(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	// The reading the view's store state records, else (the store could not record it)
	// the one just taken; never another: the sources are not read while the view holds
	// its read transaction open.
	if v, ok := vctx.Value(svcViewKey{s}).(*svcView); ok && v.snap != nil {
		snap = v.snap
	}
	w, err := s.liveOf(vctx, snap)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return vctx, w, release, nil
}

// vertexNodes are the nodes whose relations are node's: those of its vertex, an identity
// and its present bound devices (a present bound device stands for its identity's vertex,
// its fellow devices included, as in a traversal).
func (w *liveView) vertexNodes(node string) []string {
	if id := w.boundOf[node]; id != "" {
		node = id
	}
	return append([]string{node}, w.members[node]...)
}

// observedOf returns the observed relations touching any of nodes, by id.
func (w *liveView) observedOf(nodes []string) []*graph.Relation {
	if len(nodes) == 1 {
		return w.obsOf[nodes[0]]
	}
	seen := map[string]bool{}
	var out []*graph.Relation
	for _, n := range nodes {
		for _, r := range w.obsOf[n] {
			if !seen[r.ID] {
				seen[r.ID] = true
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// suggestClient names the live client closest to text, "" when none is close.
func (w *liveView) suggestClient(text string) string {
	best, bestD := "", 1<<30
	ids := make([]string, 0, len(w.clients))
	for id := range w.clients {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	local := strings.TrimPrefix(text, string(graph.KindClient)+":")
	for _, id := range ids {
		d := graph.EditDistance(local, strings.TrimPrefix(id, string(graph.KindClient)+":"), 0)
		if d < bestD {
			best, bestD = id, d
		}
	}
	if best != "" && bestD > max(3, len(local)/2) {
		return ""
	}
	return best
}

// clientNotFound is ENOTFOUND for a client id no source sees, with the closest live one.
func (w *liveView) clientNotFound(field, id string) error {
	if len(w.clients) == 0 {
		return graph.FieldErrorf(graph.ENOTFOUND, field, "unknown client %s; no clients are live right now (clients are applications the sources see, e.g. client:alsa:Bitwig Studio)", id)
	}
	if s := w.suggestClient(id); s != "" {
		return graph.FieldErrorf(graph.ENOTFOUND, field, "unknown client %s; did you mean %s? a device's relations show its clients", id, s).Next(graph.ListStep(graph.ListClients, ""))
	}
	return graph.FieldErrorf(graph.ENOTFOUND, field, "unknown client %s; no live client is named like it", id)
}

// isClientID says whether text names a client (client:<source>:<name>).
func isClientID(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), string(graph.KindClient)+":")
}

// withField re-labels a graph error's field (the store names it "id"; the caller knows
// it as from, to or node).
func withField(err error, field string) error {
	var ge *graph.Error
	if !errors.As(err, &ge) {
		return err
	}
	out := *ge
	out.Field = field
	return &out
}

// resolveNode turns what was typed into the id of a node relations may hang off: an
// identity, device or robot through the Resolver, or a live client. A tag, note or
// relation is EINVALID.
func (s *Service) resolveNode(ctx context.Context, w *liveView, field, text string) (string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return "", graph.FieldErrorf(graph.EINVALID, field, "no %s node given; want an identity (jdxi), a device ref (usb:3-3.2), a robot or a client", field)
	}
	if isClientID(t) {
		if w.clients[t] == nil {
			return "", w.clientNotFound(field, t)
		}
		return t, nil
	}
	switch k := graph.KindOf(t); k {
	case graph.KindIdentity, graph.KindDevice, "":
	default:
		return "", graph.FieldErrorf(graph.EINVALID, field, "%s is a %s; relations hang off identities, devices, robots and clients", t, kindWord(k))
	}
	id, err := s.store.ResolveID(ctx, t, graph.KindIdentity, graph.KindDevice)
	if err == nil {
		return id, nil
	}
	if graph.ErrorCode(err) == graph.ENOTFOUND {
		// A client typed by its name ("Bitwig Studio") is that client when one has it.
		var named []string
		for _, c := range w.clients {
			if strings.EqualFold(c.Name, t) {
				named = append(named, c.ID)
			}
		}
		if len(named) == 1 {
			return named[0], nil
		}
		// A tag typed as tags are written ("role:synth") is refused as a tag, not
		// reported as an unknown identity.
		if s.looksLikeTag(ctx, t) {
			return "", graph.FieldErrorf(graph.EINVALID, field, "%s is a tag; relations hang off identities, devices, robots and clients", t)
		}
	}
	return "", withField(err, field)
}

func kindWord(k graph.Kind) string {
	switch k {
	case graph.KindRelation, graph.KindObserved:
		return "relation"
	case graph.KindNote:
		return "note"
	case graph.KindTag:
		return "tag"
	case graph.KindEvent:
		return "changelog event"
	}
	return string(k)
}

// declaredEndpoint resolves one end of a relation to declare: a client is refused (live
// endpoints cannot be declared), anything else goes through the Resolver so "jdxi" and
// "usb:3-3.2" work. A tag, note or relation is passed on as typed for the store to refuse
// with its own words.
func (s *Service) declaredEndpoint(ctx context.Context, field, text string) (string, error) {
	t := strings.TrimSpace(text)
	if isClientID(t) {
		return "", liveEndpoint(field, t)
	}
	switch graph.KindOf(t) {
	case graph.KindIdentity, graph.KindDevice, "":
	default:
		return t, nil
	}
	if t == "" {
		return t, nil // the store names the missing field
	}
	id, err := s.store.ResolveID(ctx, t, graph.KindIdentity, graph.KindDevice)
	if err == nil {
		return id, nil
	}
	if graph.ErrorCode(err) == graph.ENOTFOUND {
		// A client typed by its name ("Bitwig Studio") is still a live endpoint.
		if w, werr := s.live(ctx); werr == nil {
			for _, c := range w.clients {
				if strings.EqualFold(c.Name, t) {
					return "", liveEndpoint(field, c.ID)
				}
			}
		}
		// A tag typed as tags are written ("role:synth") is refused as a tag, not
		// reported as an unknown identity.
		if s.looksLikeTag(ctx, t) {
			return "", graph.ValidateRelationEndpoint(field, "tag:"+t)
		}
	}
	return "", withField(err, field)
}

// looksLikeTag reports whether text that names no node is a tag: namespace:value with a
// seeded namespace, or a tag some node carries.
func (s *Service) looksLikeTag(ctx context.Context, text string) bool {
	if graph.KindOf(text) != "" || !strings.Contains(text, ":") {
		return false
	}
	tag, err := graph.NormalizeTag(text)
	if err != nil {
		return false
	}
	if slices.Contains(graph.SeedNamespaces, tag[:strings.IndexByte(tag, ':')]) {
		return true
	}
	_, total, _, err := s.store.FindTagged(ctx, tag, 1, "")
	return err == nil && total > 0
}

func liveEndpoint(field, id string) error {
	return graph.FieldErrorf(graph.EINVALID, field, "%s is a client the sources see right now: live endpoints cannot be declared; relate the device it runs on, or the identity bound to it", id)
}

// Relate declares a relation between two nodes, typed in any form the Resolver accepts.
func (s *Service) Relate(ctx context.Context, c graph.RelationCreate) (*graph.RelationChange, error) {
	rs, err := s.relStore()
	if err != nil {
		return nil, err
	}
	if c.From, err = s.declaredEndpoint(ctx, "from", c.From); err != nil {
		return nil, err
	}
	if c.To, err = s.declaredEndpoint(ctx, "to", c.To); err != nil {
		return nil, err
	}
	if err := s.refuseBoundLoop(ctx, c.From, c.To); err != nil {
		return nil, err
	}
	return rs.Relate(ctx, c)
}

// refuseBoundLoop refuses a relation between an identity and a device bound to it
// (explicitly or by a high, unambiguous match: DeviceView.BoundTo): the two are one
// vertex, so the relation would be a self-loop.
func (s *Service) refuseBoundLoop(ctx context.Context, from, to string) error {
	ident, dev := from, to
	if graph.KindOf(ident) != graph.KindIdentity {
		ident, dev = to, from
	}
	if graph.KindOf(ident) != graph.KindIdentity || graph.KindOf(dev) != graph.KindDevice {
		return nil
	}
	d, err := s.Device(ctx, dev)
	if err != nil || d.BoundTo != ident {
		return nil
	}
	return graph.FieldErrorf(graph.EINVALID, "to", "%s is bound to %s, so they are one thing and the relation would be a self-loop; relate the identity to something else", dev, ident)
}

// UpdateRelation changes a declared relation's attrs or ports.
func (s *Service) UpdateRelation(ctx context.Context, id string, u graph.RelationUpdate) (*graph.RelationChange, error) {
	rs, err := s.relStore()
	if err != nil {
		return nil, err
	}
	return rs.UpdateRelation(ctx, id, u) // an observed id is refused there, in the same words everywhere
}

// Unrelate removes a declared relation by id or by its tuple.
func (s *Service) Unrelate(ctx context.Context, r graph.RelationRemove) (*graph.RelationChange, error) {
	rs, err := s.relStore()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.ID) == "" {
		if r.From, err = s.declaredEndpoint(ctx, "from", r.From); err != nil {
			return nil, err
		}
		if r.To, err = s.declaredEndpoint(ctx, "to", r.To); err != nil {
			return nil, err
		}
	}
	return rs.Unrelate(ctx, r)
}

// FindRelationByID finds a declared relation in the store, an observed one in the live
// snapshot.
func (s *Service) FindRelationByID(ctx context.Context, id string) (*graph.Relation, error) {
	id = strings.TrimSpace(id)
	if graph.KindOf(id) != graph.KindObserved {
		rs, err := s.relStore()
		if err != nil {
			return nil, err
		}
		return rs.FindRelationByID(ctx, id)
	}
	w, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	if r := w.obsByID[id]; r != nil {
		return r, nil
	}
	best, bestD := "", 1<<30
	for _, r := range w.obs {
		if d := graph.EditDistance(id, r.ID, 0); d < bestD {
			best, bestD = r.ID, d
		}
	}
	if best != "" && bestD <= 4 {
		return nil, graph.FieldErrorf(graph.ENOTFOUND, "id", "no observed relation %s right now; did you mean %s? observed relations come and go with the hardware", id, best)
	}
	return nil, graph.FieldErrorf(graph.ENOTFOUND, "id", "no observed relation %s right now (observed relations come and go with the hardware); list a node's relations to see their ids", id)
}

// relationFilter is a checked RelationFilter.
type relationFilter struct {
	dir       string
	types     map[string]bool
	decl, obs bool
	first     int
}

func checkRelationFilter(f graph.RelationFilter) (relationFilter, error) {
	rf := relationFilter{dir: strings.ToLower(strings.TrimSpace(f.Direction)), first: graph.ClampFirst(f.First)}
	switch rf.dir {
	case "":
		rf.dir = graph.DirBoth
	case graph.DirOut, graph.DirIn, graph.DirBoth:
	default:
		return rf, graph.FieldErrorf(graph.EINVALID, "direction", "direction %q: want out, in or both", f.Direction)
	}
	if len(f.Types) > 0 {
		rf.types = map[string]bool{}
		for _, t := range f.Types {
			n, err := graph.NormalizeRelationType(t)
			if err != nil {
				return rf, withField(err, "types")
			}
			rf.types[n] = true
		}
	}
	rf.decl, rf.obs = f.Declared || !f.Observed, f.Observed || !f.Declared
	if f.First < 0 {
		return rf, graph.FieldErrorf(graph.EINVALID, "first", "first must be at least 1, got %d", f.First)
	}
	return rf, nil
}

// keep reports whether r passes the filter's type and direction (relative to the nodes
// in set; nil set: no direction).
func (rf relationFilter) keep(r *graph.Relation, set map[string]bool) bool {
	if rf.types != nil && !rf.types[r.Type] {
		return false
	}
	switch {
	case set == nil || rf.dir == graph.DirBoth:
		return true
	case rf.dir == graph.DirOut:
		return set[r.From]
	default:
		return set[r.To]
	}
}

// FindRelations lists relations, declared first then observed, a page at a time. On a
// node, the relations of its vertex.
func (s *Service) FindRelations(ctx context.Context, f graph.RelationFilter) ([]*graph.Relation, int, string, error) {
	rf, err := checkRelationFilter(f)
	if err != nil {
		return nil, 0, "", err
	}
	cur, err := decodeRelCursor(f.After)
	if err != nil {
		return nil, 0, "", err
	}
	rs, err := s.relStore()
	if err != nil {
		return nil, 0, "", err
	}
	if strings.TrimSpace(f.Node) == "" {
		return s.allRelations(ctx, rs, f, rf, cur)
	}
	ctx, w, release, err := s.readLive(ctx)
	if err != nil {
		return nil, 0, "", err
	}
	defer release()
	node, err := s.resolveNode(ctx, w, "node", f.Node)
	if err != nil {
		return nil, 0, "", err
	}
	nodes := w.vertexNodes(node)
	set := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		set[n] = true
	}
	var decl []*graph.Relation
	if rf.decl && !isClientID(node) {
		all, err := rs.RelationsOf(ctx, nodes)
		if err != nil {
			return nil, 0, "", err
		}
		for _, r := range all {
			if rf.keep(r, set) {
				decl = append(decl, r)
			}
		}
	}
	var obs []*graph.Relation
	if rf.obs {
		for _, r := range w.observedOf(nodes) {
			if rf.keep(r, set) {
				obs = append(obs, r)
			}
		}
	}
	var pager declaredPager
	if rf.decl {
		pager = listPager(decl)
	}
	return pageRelations(ctx, pager, obs, rf.first, cur)
}

// allRelations lists every declared relation (the store pages them), then, when asked
// for, the whole live set.
func (s *Service) allRelations(ctx context.Context, rs graph.RelationStore, f graph.RelationFilter, rf relationFilter, cur relCursor) ([]*graph.Relation, int, string, error) {
	var obs []*graph.Relation
	if f.Observed {
		w, err := s.live(ctx)
		if err != nil {
			return nil, 0, "", err
		}
		for _, r := range w.obs {
			if rf.keep(r, nil) {
				obs = append(obs, r)
			}
		}
	}
	var pager declaredPager
	if rf.decl {
		pager = func(ctx context.Context, after string, first int) ([]*graph.Relation, int, string, error) {
			return rs.FindRelations(ctx, graph.RelationFilter{Types: f.Types, Declared: true, First: first, After: after})
		}
	}
	return pageRelations(ctx, pager, obs, rf.first, cur)
}

// declaredPager returns a page of declared relations after a cursor of its own, their
// total and the next cursor ("" on the last page).
type declaredPager func(ctx context.Context, after string, first int) ([]*graph.Relation, int, string, error)

// listPager pages a list sorted by id; its cursor is the last id listed.
func listPager(rels []*graph.Relation) declaredPager {
	return func(_ context.Context, after string, first int) ([]*graph.Relation, int, string, error) {
		i := sort.Search(len(rels), func(i int) bool { return rels[i].ID > after })
		j := min(i+first, len(rels))
		page := rels[i:j:j]
		next := ""
		if j < len(rels) && j > i {
			next = rels[j-1].ID
		}
		return page, len(rels), next, nil
	}
}

// A relCursor says where a page of relations starts: inside the declared ones (at the
// store's own cursor), or inside the observed ones after an id ("" at their start).
type relCursor struct {
	observed bool
	pos      string
}

func (c relCursor) encode() string {
	p := "d:"
	if c.observed {
		p = "o:"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(p + c.pos))
}

func decodeRelCursor(after string) (relCursor, error) {
	if after == "" {
		return relCursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(after)
	if err == nil && len(b) >= 2 && (b[0] == 'd' || b[0] == 'o') && b[1] == ':' {
		return relCursor{observed: b[0] == 'o', pos: string(b[2:])}, nil
	}
	return relCursor{}, graph.FieldErrorf(graph.EINVALID, "after", "%q is not a cursor of this list; pass the next cursor a previous page returned, or none for the first page", after)
}

// pageRelations pages declared relations (when decl is not nil) then observed ones
// (sorted by id), the total counting both.
func pageRelations(ctx context.Context, decl declaredPager, obs []*graph.Relation, first int, cur relCursor) ([]*graph.Relation, int, string, error) {
	out := []*graph.Relation{}
	total := len(obs)
	if decl != nil {
		if cur.observed {
			_, n, _, err := decl(ctx, "", 1)
			if err != nil {
				return nil, 0, "", err
			}
			total += n
		} else {
			page, n, next, err := decl(ctx, cur.pos, first)
			if err != nil {
				return nil, 0, "", err
			}
			total += n
			out = append(out, page...)
			if next != "" {
				return out, total, relCursor{pos: next}.encode(), nil
			}
		}
	}
	i := 0
	if cur.observed {
		i = sort.Search(len(obs), func(i int) bool { return obs[i].ID > cur.pos })
	}
	last := ""
	for ; i < len(obs) && len(out) < first; i++ {
		out = append(out, obs[i])
		last = obs[i].ID
	}
	if i < len(obs) {
		return out, total, relCursor{observed: true, pos: last}.encode(), nil
	}
	return out, total, "", nil
}

// RelationTypes lists the store's types with their counts, and the reserved types only
// sources produce.
func (s *Service) RelationTypes(ctx context.Context) ([]graph.RelationTypeCount, error) {
	rs, err := s.relStore()
	if err != nil {
		return nil, err
	}
	types, err := rs.RelationTypes(ctx)
	if err != nil {
		return nil, err
	}
	out := append([]graph.RelationTypeCount(nil), types...)
	for _, t := range graph.ReservedRelationTypes {
		found := false
		for i := range out {
			if out[i].Type == t {
				out[i].Reserved, found = true, true
			}
		}
		if !found {
			out = append(out, graph.RelationTypeCount{Type: t, Reserved: true})
		}
	}
	return out, nil
}

// Clients lists the clients the sources see right now, by id.
func (s *Service) Clients(ctx context.Context) ([]*graph.Client, error) {
	w, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Client, 0, len(w.clients))
	for _, c := range w.clients {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Client finds one live client by id.
func (s *Service) Client(ctx context.Context, id string) (*graph.Client, error) {
	w, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	id = strings.TrimSpace(id)
	if !isClientID(id) {
		id = string(graph.KindClient) + ":" + id
	}
	if c := w.clients[id]; c != nil {
		return c, nil
	}
	return nil, w.clientNotFound("id", id)
}
