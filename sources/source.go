package sources

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

// Source is one reader of live hardware that Live merges into its snapshot beside the
// built-in usb, alsa and pipewire readers (the robot package plugs in this way, so
// sources never imports it).
//
// Name is the source's short name as reported in Snapshot.Sources ("robot"). Scan returns
// the devices the source sees now, already one ObservedDevice per physical thing, each
// with Key, Ref, Source and Fingerprints set. An error means the whole source is
// unavailable: Live reports it with OK=false and the error's message, and the other
// sources still answer.
type Source interface {
	Name() string
	Scan(ctx context.Context) ([]*graph.ObservedDevice, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc struct {
	SourceName string
	Fn         func(ctx context.Context) ([]*graph.ObservedDevice, error)
}

func (s SourceFunc) Name() string { return s.SourceName }

func (s SourceFunc) Scan(ctx context.Context) ([]*graph.ObservedDevice, error) { return s.Fn(ctx) }
