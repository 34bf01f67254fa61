package query

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/graphql-go/graphql"
)

// connection is one page of a list, ready for the XConnection types.
type connection struct {
	edges   []edge
	hasNext bool
	end     string
	total   *int
}

type edge struct {
	cursor string
	node   any
	item   any // the item the edge was made from (find: *findHit), for extra edge fields
}

// fetchFunc reads one page from the service: the items after a store cursor, the total
// when it is cheap (-1 when not), and the store cursor of the next page ("" on the last).
type fetchFunc func(ctx context.Context, after string, first int) (items []any, total int, next string, err error)

// Cursors are opaque to clients: base64 of "v1|<offset>|<store cursor>". The store hands
// out a cursor per page only; an edge's cursor is its page's start plus its offset, so any
// edge can be resumed from (the offset is skipped with one extra read of at most a page).
func encodeCursor(storeAfter string, off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + strconv.Itoa(off) + "|" + storeAfter))
}

func decodeCursor(c string) (storeAfter string, off int, err error) {
	if c == "" {
		return "", 0, nil
	}
	bad := invalidArg("after", "after %q is not a cursor of this list; pass a cursor or pageInfo.endCursor from a previous page of the same list", truncate(c, 40))
	b, derr := base64.RawURLEncoding.DecodeString(c)
	if derr != nil {
		return "", 0, bad
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return "", 0, bad
	}
	off, aerr := strconv.Atoi(parts[1])
	if aerr != nil || off < 0 || off > 100000 {
		return "", 0, bad
	}
	return parts[2], off, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// page reads the page of first items after the client cursor.
func page(ctx context.Context, first int, after string, fetch fetchFunc) (*connection, error) {
	storeAfter, off, err := decodeCursor(after)
	if err != nil {
		return nil, err
	}
	if off > 0 {
		// Skip the edges before the cursor; the store's next cursor lands right after them.
		_, _, next, err := fetch(ctx, storeAfter, off)
		if err != nil {
			return nil, err
		}
		if next == "" {
			return &connection{end: after}, nil
		}
		storeAfter = next
	}
	items, total, next, err := fetch(ctx, storeAfter, first)
	if err != nil {
		return nil, err
	}
	c := &connection{edges: make([]edge, len(items)), hasNext: next != ""}
	for i, it := range items {
		c.edges[i] = edge{cursor: encodeCursor(storeAfter, i+1), node: it, item: it}
		if e, ok := it.(edgeItem); ok {
			c.edges[i].node = e.edgeNode()
		}
	}
	if next != "" {
		c.end = encodeCursor(next, 0)
		if len(c.edges) > 0 {
			c.edges[len(c.edges)-1].cursor = c.end
		}
	} else if len(items) > 0 {
		c.end = c.edges[len(c.edges)-1].cursor
	} else {
		c.end = after
	}
	if total >= 0 {
		t := total
		c.total = &t
	}
	return c, nil
}

// edgeItem is an item that carries more than its node: the edge shows the item's extra
// fields (find's score and matched positions) and its node.
type edgeItem interface{ edgeNode() any }

// listFetch reads up to n items of one list after a store cursor: the items, the total
// when it is cheap (-1 when not) and the store cursor of the next page ("" on the last).
// n is at least 1.
type listFetch[T any] func(ctx context.Context, after string, n int) (items []T, total int, next string, err error)

// pageList is the one way every list field pages, so paging behaves the same everywhere:
// it reads first (b.first: default def, 0..Limits.MaxPageSize, else INVALID) and after,
// and pages fetch. With first: 0 it reads one item only for the total.
func pageList[T any](ctx context.Context, b *builder, p graphql.ResolveParams, def int, fetch listFetch[T]) (*connection, error) {
	first, err := b.first(p, def)
	if err != nil {
		return nil, err
	}
	return page(ctx, first, argString(p, "after"), func(ctx context.Context, after string, n int) ([]any, int, string, error) {
		items, total, next, err := fetch(ctx, after, max(n, 1))
		if err != nil {
			return nil, 0, "", err
		}
		if n == 0 {
			return nil, total, after, nil
		}
		out := make([]any, len(items))
		for i, x := range items {
			out[i] = x
		}
		return out, total, next, nil
	})
}

// sliceFetch pages a list the service returns whole (robots, unbound devices, tags, find
// hits): the store cursor is the decimal offset into all, and the total is len(all).
func sliceFetch[T any](all []T) listFetch[T] {
	return func(ctx context.Context, after string, n int) ([]T, int, string, error) {
		off := 0
		if after != "" {
			o, err := strconv.Atoi(after)
			if err != nil || o < 0 {
				return nil, 0, "", invalidArg("after", "after is not a cursor of this list; pass a cursor or pageInfo.endCursor from a previous page of the same list")
			}
			off = min(o, len(all))
		}
		end := min(off+n, len(all))
		next := ""
		if end < len(all) {
			next = strconv.Itoa(end)
		}
		return all[off:end], len(all), next, nil
	}
}
