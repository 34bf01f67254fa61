package main

import (
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/migrations"
)

// buildDate is stamped by `make build` and `make install`
// (-ldflags "-X main.buildDate=2026-11-28T07:00:00Z"); empty otherwise.
var buildDate string

// Version is devgraph's version string: `devgraph version`'s first line, MCP's
// serverInfo.version and the socket's ping all say it.
var Version = readBuild().String()

// buildInfo is what the binary knows about its build, from debug.ReadBuildInfo.
type buildInfo struct {
	// Version is the module version: v1.2.3 when installed with go install …@v1.2.3,
	// else "dev" (a build from a clone).
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, with "+dirty" when the
	// work tree had uncommitted changes; empty when the build recorded none.
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"` // RFC 3339
	BuildDate  string `json:"build_date,omitempty"`  // RFC 3339, from make build / make install
	Go         string `json:"go"`
	Platform   string `json:"platform"` // GOOS/GOARCH
	Schema     int    `json:"schema"`   // the database schema version this binary writes
}

func readBuild() *buildInfo {
	b := &buildInfo{Version: "dev", BuildDate: buildDate, Go: goruntime.Version(),
		Platform: goruntime.GOOS + "/" + goruntime.GOARCH, Schema: migrations.CurrentVersion}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && b.Commit != "" {
		b.Commit += "+dirty"
	}
	return b
}

// String is the one-line version: "v1.2.3", or "dev (0908b18a696e+dirty)" for a build
// from a clone.
func (b *buildInfo) String() string {
	if b.Commit == "" {
		return b.Version
	}
	c := b.Commit
	if len(c) > 12 {
		dirty := len(c) > 6 && c[len(c)-6:] == "+dirty"
		c = c[:12]
		if dirty {
			c += "+dirty"
		}
	}
	return b.Version + " (" + c + ")"
}

func newVersionCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version, commit, build date, Go and schema versions",
		Example: `  devgraph version
  devgraph --version
  devgraph version --json`,
		Args:        nargs(0, 0),
		Annotations: map[string]string{keepsGCHold: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), c, c.e.stdout)
		},
	}
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runVersion(ctx context.Context, o *common, out io.Writer) error {
	b := readBuild()
	if o.asJSON() {
		return writeJSON(out, b)
	}
	fmt.Fprintf(out, "devgraph %s\n", b)
	if b.Commit != "" {
		fmt.Fprintf(out, "  commit   %s", b.Commit)
		if b.CommitTime != "" {
			fmt.Fprintf(out, " (%s)", b.CommitTime)
		}
		fmt.Fprintln(out)
	}
	if b.BuildDate != "" {
		fmt.Fprintf(out, "  built    %s\n", b.BuildDate)
	}
	fmt.Fprintf(out, "  go       %s %s\n", b.Go, b.Platform)
	_, err := fmt.Fprintf(out, "  schema   %d\n", b.Schema)
	return err
}
