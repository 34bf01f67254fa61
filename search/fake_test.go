package search_test

import (
	"context"
	"sort"
	"strconv"

	"github.com/devgraph/devgraph/graph"
)

// fakeSource is a graph.NameSource in memory: identities and devices, and one changelog
// event per node added.
type fakeSource struct {
	deviceReads int // FindDevices calls: one per page of a full rebuild
	ids         map[string]*graph.Identity
	devs        map[string]*graph.Device
	events      []*graph.Event // oldest first
}

func newFakeSource() *fakeSource {
	return &fakeSource{ids: map[string]*graph.Identity{}, devs: map[string]*graph.Device{}}
}

func (s *fakeSource) addIdentity(id, name string, tags ...string) {
	s.ids[id] = &graph.Identity{ID: id, Name: name, Tags: tags}
	s.events = append(s.events, &graph.Event{Seq: uint64(len(s.events) + 1), Action: "identity.create", Target: id})
}

func page[T any](m map[string]T, first int, after string) ([]T, int, string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	next := ""
	if len(keys) > first {
		keys = keys[:first]
		next = keys[first-1]
	}
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out, len(m), next
}

func (s *fakeSource) FindIdentities(_ context.Context, f graph.IdentityFilter) ([]*graph.Identity, int, string, error) {
	out, total, next := page(s.ids, f.First, f.After)
	return out, total, next, nil
}

func (s *fakeSource) FindIdentityByID(_ context.Context, id string, _ graph.IdentityParts) (*graph.Identity, error) {
	if x := s.ids[id]; x != nil {
		return x, nil
	}
	return nil, graph.Errorf(graph.ENOTFOUND, "unknown identity %q", id)
}

func (s *fakeSource) FindDevices(_ context.Context, f graph.DeviceFilter) ([]*graph.Device, int, string, error) {
	s.deviceReads++
	out, total, next := page(s.devs, f.First, f.After)
	return out, total, next, nil
}

func (s *fakeSource) FindDeviceByID(_ context.Context, id string) (*graph.Device, error) {
	if x := s.devs[id]; x != nil {
		return x, nil
	}
	return nil, graph.Errorf(graph.ENOTFOUND, "unknown device %q", id)
}

// FindEvents reads the log newest first; a context from viewAt sees it as it was then.
func (s *fakeSource) FindEvents(ctx context.Context, f graph.EventFilter) ([]*graph.Event, string, error) {
	end := len(s.events) // newest first: events[end-1], events[end-2], …
	if seq, ok := ctx.Value(viewAt{}).(uint64); ok {
		end = int(seq)
	}
	if f.After != "" {
		n, err := strconv.Atoi(f.After)
		if err != nil {
			return nil, "", err
		}
		end = n
	}
	var out []*graph.Event
	for i := end - 1; i >= 0 && len(out) < f.First; i-- {
		out = append(out, s.events[i])
	}
	next := ""
	if start := end - len(out); start > 0 {
		next = strconv.Itoa(start)
	}
	return out, next, nil
}
