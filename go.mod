module devgraph

go 1.26.8

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/graphql-go/graphql v0.8.1 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/sahilm/fuzzy v0.1.3 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
