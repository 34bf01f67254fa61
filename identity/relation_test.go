package identity_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
)

// studio is the demo rig with the JD-Xi and the KeyStep bound to identities, a MIDI cable
// declared between the identities and an audio cable declared on the JD-Xi's device.
type studio struct {
	svc              *identity.Service
	rig              *rig
	ctx              context.Context
	jdxiDev, keyDev  string // device ids
	jdxiRef, keyRef  string
	cable, audio     *graph.Relation
	bitwig           *graph.Client
	scarlett, robot  string // device ids: the audio interface, the robot base
	rootHub, rootRef string
}

func newStudio(t *testing.T) *studio {
	t.Helper()
	svc, r, ctx := newService(t)
	s := &studio{svc: svc, rig: r, ctx: ctx}
	devs, _, _, err := svc.Devices(ctx, graph.DeviceFilter{First: graph.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		switch {
		case d.Ref == "usb:3-3.2":
			s.jdxiDev, s.jdxiRef = d.ID, d.Ref
		case strings.Contains(d.Name, "KeyStep"):
			s.keyDev, s.keyRef = d.ID, d.Ref
		case d.Ref == "usb:3-3.1":
			s.scarlett = d.ID
		case d.Ref == "usb:3-7":
			s.robot = d.ID
		case d.Ref == "usb:usb3":
			s.rootHub, s.rootRef = d.ID, d.Ref
		}
	}
	if s.jdxiDev == "" || s.keyDev == "" || s.scarlett == "" || s.robot == "" || s.rootHub == "" {
		t.Fatalf("the demo rig lacks the JD-Xi, a KeyStep, the Scarlett, the robot base or root hub usb:usb3: %v", refs(devs))
	}
	mustBind(t, ctx, svc, graph.BindInput{Ref: s.jdxiRef, NewName: "JD-Xi", Slug: "jdxi"})
	mustBind(t, ctx, svc, graph.BindInput{Ref: s.keyRef, NewName: "KeyStep", Slug: "keystep"})
	s.cable = mustRelate(t, ctx, svc, graph.RelationCreate{From: "keystep", FromPort: "MIDI OUT", Type: "cable", To: "jdxi", ToPort: "MIDI IN", Attrs: map[string]string{"kind": "midi-din"}})
	s.audio = mustRelate(t, ctx, svc, graph.RelationCreate{From: s.jdxiRef, FromPort: "Main Out", Type: "cable", To: "usb:3-3.1", ToPort: "Input 1", Attrs: map[string]string{"kind": "audio"}})
	clients, err := svc.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		if c.Name == "Bitwig Studio" {
			s.bitwig = c
		}
	}
	if s.bitwig == nil {
		t.Fatalf("no Bitwig Studio among the live clients %v", clientIDs(clients))
	}
	return s
}

func mustRelate(t *testing.T, ctx context.Context, svc *identity.Service, c graph.RelationCreate) *graph.Relation {
	t.Helper()
	ch, err := svc.Relate(ctx, c)
	if err != nil {
		t.Fatalf("relate %+v: %v", c, err)
	}
	if ch.Action != "add" {
		t.Fatalf("relate %+v: action %q, want add", c, ch.Action)
	}
	return ch.Relation
}

func clientIDs(cs []*graph.Client) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func relIDs(rs []*graph.Relation) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// relations lists every relation of f, all pages.
func relations(t *testing.T, ctx context.Context, svc graph.RelationService, f graph.RelationFilter) []*graph.Relation {
	t.Helper()
	f.First = graph.MaxPageSize
	rs, total, next, err := svc.FindRelations(ctx, f)
	if err != nil {
		t.Fatalf("relations %+v: %v", f, err)
	}
	if next != "" || total != len(rs) {
		t.Fatalf("relations %+v: %d listed, total %d, next %q: want everything on one page", f, len(rs), total, next)
	}
	return rs
}

func findRel(rs []*graph.Relation, pred func(*graph.Relation) bool) *graph.Relation {
	for _, r := range rs {
		if pred(r) {
			return r
		}
	}
	return nil
}

func wantCode(t *testing.T, err error, code string, words ...string) {
	t.Helper()
	if graph.ErrorCode(err) != code {
		t.Fatalf("error %v (%s), want %s", err, graph.ErrorCode(err), code)
	}
	for _, w := range words {
		if !strings.Contains(graph.ErrorMessage(err), w) {
			t.Errorf("error %q does not say %q", graph.ErrorMessage(err), w)
		}
	}
}

// A relation declared on an identity shows on its bound, present device, one declared on
// the device shows on the identity, and the device's observed relations show on both,
// after the declared ones, marked observed with their source.
func TestRelations_OneVertex(t *testing.T) {
	s := newStudio(t)
	onIdent := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi"})
	onDev := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: s.jdxiRef})
	if !slices.Equal(relIDs(onIdent), relIDs(onDev)) {
		t.Fatalf("the JD-Xi's identity lists %v, its device %v: one vertex, one list", relIDs(onIdent), relIDs(onDev))
	}
	if onIdent[0].ID != s.audio.ID && onIdent[0].ID != s.cable.ID || onIdent[1].ID != s.audio.ID && onIdent[1].ID != s.cable.ID {
		t.Fatalf("the declared cables do not come first: %v", relIDs(onIdent))
	}
	if onIdent[0].ID > onIdent[1].ID {
		t.Errorf("declared relations not sorted by id: %v", relIDs(onIdent[:2]))
	}
	if onIdent[0].From != s.cable.From && onIdent[0].From != s.audio.From {
		t.Errorf("declared relation %+v changed on the way", onIdent[0])
	}
	sub := findRel(onIdent, func(r *graph.Relation) bool { return r.Type == graph.RelSubscribed && r.To == s.bitwig.ID })
	if sub == nil || !sub.Observed || sub.Source != "alsa" || sub.From != s.jdxiDev {
		t.Fatalf("no observed subscription from the JD-Xi's device to %s on the identity: %+v", s.bitwig.ID, sub)
	}
	via := findRel(onIdent, func(r *graph.Relation) bool { return r.Type == graph.RelVia && r.From == s.jdxiDev })
	if via == nil || !via.Observed || via.Source != "usb" {
		t.Fatalf("no observed via from the JD-Xi's device on the identity: %+v", via)
	}
	seenObserved := false
	for _, r := range onIdent {
		if r.Observed {
			seenObserved = true
			if !strings.HasPrefix(r.ID, "obs:") {
				t.Errorf("observed relation with id %s", r.ID)
			}
		} else if seenObserved {
			t.Errorf("declared %s listed after an observed relation: %v", r.ID, relIDs(onIdent))
		}
	}

	// The KeyStep's device sees the cable declared on its identity.
	onKey := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: s.keyRef, Declared: true})
	if !slices.Equal(relIDs(onKey), []string{s.cable.ID}) {
		t.Fatalf("the KeyStep's device lists declared %v, want the cable %s", relIDs(onKey), s.cable.ID)
	}
	// The Scarlett is bound to nothing: it sees only what touches its device.
	onScarlett := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "usb:3-3.1", Declared: true})
	if !slices.Equal(relIDs(onScarlett), []string{s.audio.ID}) {
		t.Fatalf("the Scarlett lists declared %v, want the audio cable", relIDs(onScarlett))
	}
	// A client is a node too: its relations are observed.
	onBitwig := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: s.bitwig.ID})
	if findRel(onBitwig, func(r *graph.Relation) bool { return r.ID == sub.ID }) == nil {
		t.Fatalf("%s does not list the subscription %s: %v", s.bitwig.ID, sub.ID, relIDs(onBitwig))
	}

	// By id: declared from the store, observed from the snapshot.
	got, err := s.svc.FindRelationByID(s.ctx, sub.ID)
	if err != nil || got.ID != sub.ID || !got.Observed {
		t.Fatalf("FindRelationByID(%s) = %+v, %v", sub.ID, got, err)
	}
	got, err = s.svc.FindRelationByID(s.ctx, s.cable.ID)
	if err != nil || got.ID != s.cable.ID || got.From != "identity:keystep" || got.To != "identity:jdxi" {
		t.Fatalf("FindRelationByID(%s) = %+v, %v", s.cable.ID, got, err)
	}
	_, err = s.svc.FindRelationByID(s.ctx, "obs:0000000000000000")
	wantCode(t, err, graph.ENOTFOUND, "obs:0000000000000000")
}

// The filters: kinds, types, direction.
func TestRelations_Filters(t *testing.T) {
	s := newStudio(t)
	all := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi"})
	decl := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Declared: true})
	obs := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Observed: true})
	both := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Declared: true, Observed: true})
	if len(decl) != 2 || len(obs) == 0 || len(decl)+len(obs) != len(all) || !slices.Equal(relIDs(both), relIDs(all)) {
		t.Fatalf("declared %v + observed %v is not all %v", relIDs(decl), relIDs(obs), relIDs(all))
	}
	for _, r := range decl {
		if r.Observed {
			t.Errorf("declared-only lists observed %s", r.ID)
		}
	}
	for _, r := range obs {
		if !r.Observed {
			t.Errorf("observed-only lists declared %s", r.ID)
		}
	}
	mine := map[string]bool{"identity:jdxi": true, s.jdxiDev: true}
	out := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Direction: "out"})
	in := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Direction: "in"})
	for _, r := range out {
		if !mine[r.From] {
			t.Errorf("direction out lists %s → %s", r.From, r.To)
		}
	}
	for _, r := range in {
		if !mine[r.To] {
			t.Errorf("direction in lists %s → %s", r.From, r.To)
		}
	}
	if findRel(in, func(r *graph.Relation) bool { return r.ID == s.cable.ID }) == nil || findRel(out, func(r *graph.Relation) bool { return r.ID == s.audio.ID }) == nil {
		t.Errorf("in %v / out %v miss the cable into the JD-Xi or the audio cable out of it", relIDs(in), relIDs(out))
	}
	if len(in)+len(out) != len(all) {
		t.Errorf("in %d + out %d ≠ all %d (no relation of the JD-Xi's is a loop)", len(in), len(out), len(all))
	}
	subs := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Types: []string{" Subscribed "}})
	if len(subs) == 0 {
		t.Fatal("no subscribed relations on the JD-Xi")
	}
	for _, r := range subs {
		if r.Type != graph.RelSubscribed {
			t.Errorf("type filter lets %s (%s) through", r.ID, r.Type)
		}
	}
	cables := relations(t, s.ctx, s.svc, graph.RelationFilter{Types: []string{"cable"}})
	if !slices.Equal(relIDs(cables), relIDs(decl)) {
		t.Errorf("every cable: %v, want %v", relIDs(cables), relIDs(decl))
	}
	everything := relations(t, s.ctx, s.svc, graph.RelationFilter{Declared: true, Observed: true, Types: []string{"subscribed"}})
	if findRel(everything, func(r *graph.Relation) bool { return r.ID == subs[0].ID }) == nil {
		t.Errorf("the whole live set of subscriptions %v lacks %s", relIDs(everything), subs[0].ID)
	}
}

// Pages of one cross from the declared relations to the observed ones, every relation
// once, each page saying the same total.
func TestRelations_PagingAcrossKinds(t *testing.T) {
	s := newStudio(t)
	all := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi"})
	for _, size := range []int{1, 2, 3} {
		var got []*graph.Relation
		after := ""
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatalf("first=%d: paging does not end", size)
			}
			page, total, next, err := s.svc.FindRelations(s.ctx, graph.RelationFilter{Node: "jdxi", First: size, After: after})
			if err != nil {
				t.Fatal(err)
			}
			if total != len(all) || len(page) > size {
				t.Fatalf("first=%d: a page of %d with total %d, want ≤ %d of %d", size, len(page), total, size, len(all))
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			after = next
		}
		if !slices.Equal(relIDs(got), relIDs(all)) {
			t.Fatalf("first=%d pages %v, want %v", size, relIDs(got), relIDs(all))
		}
	}
	_, _, _, err := s.svc.FindRelations(s.ctx, graph.RelationFilter{Node: "jdxi", After: "rel:not-a-cursor"})
	wantCode(t, err, graph.EINVALID, "cursor")
}

// Live clients, the types, and what may not be declared or changed.
func TestRelations_ClientsTypesAndRefusals(t *testing.T) {
	s := newStudio(t)
	c, err := s.svc.Client(s.ctx, s.bitwig.ID)
	if err != nil || c.Name != "Bitwig Studio" || c.Source != "alsa" {
		t.Fatalf("Client(%s) = %+v, %v", s.bitwig.ID, c, err)
	}
	_, err = s.svc.Client(s.ctx, "client:alsa:Bitwig Studi")
	wantCode(t, err, graph.ENOTFOUND, "did you mean "+s.bitwig.ID)

	types, err := s.svc.RelationTypes(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	byType := map[string]graph.RelationTypeCount{}
	for _, tc := range types {
		byType[tc.Type] = tc
	}
	if byType["cable"].Count != 2 || !byType["cable"].Seeded {
		t.Errorf("cable: %+v, want 2 declared, seeded", byType["cable"])
	}
	for _, r := range graph.ReservedRelationTypes {
		if !byType[r].Reserved {
			t.Errorf("reserved type %s: %+v", r, byType[r])
		}
	}

	before := len(events(t, s.ctx, s.svc))
	_, err = s.svc.Relate(s.ctx, graph.RelationCreate{From: "jdxi", Type: "controls", To: s.bitwig.ID})
	wantCode(t, err, graph.EINVALID, "live endpoints cannot be declared")
	if graph.ErrorField(err) != "to" {
		t.Errorf("field %q, want to", graph.ErrorField(err))
	}
	_, err = s.svc.Relate(s.ctx, graph.RelationCreate{From: "Bitwig Studio", Type: "controls", To: "jdxi"})
	wantCode(t, err, graph.EINVALID, "live endpoints cannot be declared")
	// An identity and its bound device are one thing: relating them is a self-loop.
	_, err = s.svc.Relate(s.ctx, graph.RelationCreate{From: "jdxi", Type: "controls", To: s.jdxiRef})
	wantCode(t, err, graph.EINVALID, "self-loop", "bound to identity:jdxi")
	_, err = s.svc.Relate(s.ctx, graph.RelationCreate{From: s.jdxiDev, Type: "part_of", To: "jdxi"})
	wantCode(t, err, graph.EINVALID, "self-loop")
	_, err = s.svc.Relate(s.ctx, graph.RelationCreate{From: "jdx1", Type: "controls", To: "keystep"})
	wantCode(t, err, graph.ENOTFOUND, "identity:jdxi")
	if graph.ErrorField(err) != "from" {
		t.Errorf("field %q, want from", graph.ErrorField(err))
	}
	// A tag typed as tags are written ("role:synth", no tag: prefix) is a tag, not an
	// unknown identity.
	_, err = s.svc.Relate(s.ctx, graph.RelationCreate{From: "jdxi", Type: "part_of", To: "role:synth"})
	wantCode(t, err, graph.EINVALID, "role:synth", "tag", "not relation endpoints")
	if graph.ErrorField(err) != "to" {
		t.Errorf("field %q, want to", graph.ErrorField(err))
	}
	sub := findRel(relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Observed: true}), func(r *graph.Relation) bool { return r.Type == graph.RelSubscribed })
	_, err = s.svc.UpdateRelation(s.ctx, sub.ID, graph.RelationUpdate{Attrs: map[string]string{"channel": "1"}})
	wantCode(t, err, graph.EINVALID, "observed")
	_, err = s.svc.Unrelate(s.ctx, graph.RelationRemove{ID: sub.ID})
	wantCode(t, err, graph.EINVALID, "observed")
	_, _, _, err = s.svc.FindRelations(s.ctx, graph.RelationFilter{Node: "jdx1"})
	wantCode(t, err, graph.ENOTFOUND, "identity:jdxi")
	_, _, _, err = s.svc.FindRelations(s.ctx, graph.RelationFilter{Node: "jdxi", Direction: "sideways"})
	wantCode(t, err, graph.EINVALID, "direction")
	_, _, _, err = s.svc.FindRelations(s.ctx, graph.RelationFilter{Node: "jdxi", Types: []string{"Not A Type!"}})
	wantCode(t, err, graph.EINVALID, "type")
	if after := len(events(t, s.ctx, s.svc)); after != before {
		t.Errorf("refused writes recorded %d events", after-before)
	}

	// A traversal may start from a client typed by its name; a tag is refused as a tag.
	tr, err := s.svc.Trace(s.ctx, "bitwig studio", graph.TraceOptions{Direction: graph.DirIn})
	if err != nil || tr.From != s.bitwig.ID || len(tr.Hops) == 0 || tr.Hops[0].To != "identity:jdxi" {
		t.Fatalf("trace upstream from Bitwig Studio by name: %+v, %v", tr, err)
	}
	_, err = s.svc.Path(s.ctx, "role:synth", "jdxi", graph.PathOptions{})
	wantCode(t, err, graph.EINVALID, "role:synth is a tag")
	if graph.ErrorField(err) != "from" {
		t.Errorf("field %q, want from", graph.ErrorField(err))
	}

	// Typed forms resolve: the tuple by refs, ports in any case, removes the audio cable.
	ch, err := s.svc.Unrelate(s.ctx, graph.RelationRemove{From: s.jdxiRef, FromPort: "main out", Type: "cable", To: "usb:3-3.1", ToPort: "INPUT 1"})
	if err != nil || ch.Action != "remove" || ch.Relation.ID != s.audio.ID {
		t.Fatalf("unrelate by tuple: %+v, %v", ch, err)
	}
	if rs := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Declared: true}); !slices.Equal(relIDs(rs), []string{s.cable.ID}) {
		t.Fatalf("after unrelate the JD-Xi lists %v", relIDs(rs))
	}
}

// Unplugged, a device is no longer one thing with its identity: the identity keeps the
// cable declared on it, the device keeps the one declared on it, and the device's observed
// relations are gone with it. Plugged back in, they are one vertex again.
func TestRelations_UnpluggedDeviceSplits(t *testing.T) {
	s := newStudio(t)
	jd, card := *s.rig.Find("3-3.2"), *s.rig.CardOf("3-3.2")
	if err := s.rig.Remove("3-3.2"); err != nil {
		t.Fatal(err)
	}
	s.rig.write()
	onIdent := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi"})
	if !slices.Equal(relIDs(onIdent), []string{s.cable.ID}) {
		t.Fatalf("with the JD-Xi unplugged its identity lists %v, want only the cable declared on it", relIDs(onIdent))
	}
	onDev := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: s.jdxiDev})
	if !slices.Equal(relIDs(onDev), []string{s.audio.ID}) {
		t.Fatalf("the unplugged JD-Xi device lists %v, want only the audio cable declared on it", relIDs(onDev))
	}
	if err := s.rig.Plug(&jd, &card); err != nil {
		t.Fatal(err)
	}
	s.rig.write()
	back := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Declared: true})
	if len(back) != 2 {
		t.Fatalf("plugged back in, the JD-Xi's identity lists declared %v, want both cables", relIDs(back))
	}
	if sub := findRel(relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "jdxi", Observed: true}), func(r *graph.Relation) bool { return r.To == s.bitwig.ID }); sub == nil {
		t.Errorf("plugged back in, the JD-Xi's subscription to %s is not on its identity", s.bitwig.ID)
	}
}

// An identity with two present devices is one vertex: each device lists what the other
// holds, as the identity and a traversal from either do.
func TestRelations_VertexOfTwoDevices(t *testing.T) {
	s := newStudio(t)
	power := mustRelate(t, s.ctx, s.svc, graph.RelationCreate{From: s.robot, Type: "powered_by", To: s.scarlett})
	mustBind(t, s.ctx, s.svc, graph.BindInput{Ref: "usb:3-7", IdentityID: "identity:keystep", Force: true}) // another model: a second device of one thing
	onIdent := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: "keystep"})
	if findRel(onIdent, func(r *graph.Relation) bool { return r.ID == power.ID }) == nil {
		t.Fatalf("the KeyStep's identity does not list %s declared on its second device: %v", power.ID, relIDs(onIdent))
	}
	for _, node := range []string{s.keyRef, "usb:3-7"} {
		onDev := relations(t, s.ctx, s.svc, graph.RelationFilter{Node: node})
		if !slices.Equal(relIDs(onDev), relIDs(onIdent)) {
			t.Errorf("device %s lists %v, its identity %v: one vertex, one list", node, relIDs(onDev), relIDs(onIdent))
		}
	}
	g, err := s.svc.Neighbors(s.ctx, s.keyRef, graph.NeighborOptions{Types: []string{"powered_by"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Vertices) != 2 || g.Vertices[0].ID != "identity:keystep" {
		t.Fatalf("neighbours of %s by powered_by: %+v", s.keyRef, g.Vertices)
	}
}

// A device bound by a high match (DeviceView.BoundTo, no explicit binding) is one vertex
// with its identity too: a relation between the two is a self-loop, refused as for an
// explicit binding.
func TestRelations_MatchBoundLoopRefused(t *testing.T) {
	svc, _, ctx := newService(t)
	if _, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Scarlett", Hints: []graph.Fingerprint{{Kind: graph.FPUSBSerial, Value: "1235:8210:Y8KG3J11B6F7D0"}}}); err != nil {
		t.Fatal(err)
	}
	if v := device(t, ctx, svc, "usb:3-3.1"); v.BoundTo != "identity:scarlett" || v.BoundBy != "match" {
		t.Fatalf("the Scarlett reads bound to %q by %q, want identity:scarlett by match", v.BoundTo, v.BoundBy)
	}
	_, err := svc.Relate(ctx, graph.RelationCreate{From: "scarlett", Type: "controls", To: "usb:3-3.1"})
	wantCode(t, err, graph.EINVALID, "self-loop")
	rels, total, _, err := svc.FindRelations(ctx, graph.RelationFilter{Declared: true})
	if err != nil || total != 0 {
		t.Fatalf("relations after a refused self-loop: %v (%d) %v", relIDs(rels), total, err)
	}
}
