package mcptools

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The 2025-11-25 protocol era's client calls live here. mcp-go deprecates them in favour
// of 2026-07-28's (server/discover, subscriptions/listen); devgraph serves both eras
// (DESIGN.md), so its tests keep speaking the old one until mcp-go drops it.

func legacyProtocolOnly() client.ClientOption {
	//lint:ignore SA1019 the 2025-11-25 era (initialize) is served, so it is tested
	return client.WithLegacyProtocolOnly()
}

func legacyGETStream() transport.StreamableHTTPCOption {
	//lint:ignore SA1019 the 2025-11-25 era's standalone GET stream is served, so it is tested
	return transport.WithContinuousListening()
}

// subscribe asks for resources/updated on uris: by resources/subscribe in the
// 2025-11-25 era, by a subscriptions/listen stream naming them in the 2026-07-28 era.
// stop closes the stream (nothing to close in the old era).
func (cn *conn) subscribe(ctx context.Context, uris ...string) (stop func()) {
	cn.t.Helper()
	if cn.modern {
		stop, err := cn.c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris}, func(err error) { cn.t.Logf("listen: %v", err) })
		if err != nil {
			cn.t.Fatalf("listen %v: %v", uris, err)
		}
		return stop
	}
	for _, uri := range uris {
		//lint:ignore SA1019 resources/subscribe is the 2025-11-25 era's, which is served
		if err := cn.c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
			cn.t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	return func() {}
}

// unsubscribe drops one resource in the 2025-11-25 era (resources/unsubscribe).
func (cn *conn) unsubscribe(ctx context.Context, uri string) {
	cn.t.Helper()
	//lint:ignore SA1019 resources/unsubscribe is the 2025-11-25 era's, which is served
	if err := cn.c.Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: uri}}); err != nil {
		cn.t.Fatal(err)
	}
}
