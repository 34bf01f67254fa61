package etcdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/version"
	"golang.org/x/sys/unix"
)

// binaryPkg is the few-line main around etcdmain.Main.
const binaryPkg = "github.com/devgraph/devgraph/internal/etcdtest/etcdbin"

var binary struct {
	sync.Mutex
	path string
}

// Binary returns the path of an etcd binary built from the pinned etcd module, building it on
// first use into the user's cache directory (one file per etcd version, Go version and
// platform; later calls, in this process or another, only stat it). Test processes building
// at once take a file lock, and the binary appears under its final name only when complete.
// When the build fails the test fails under CI=true and is skipped otherwise.
func Binary(tb TB) string {
	tb.Helper()
	path, err := BuildBinary()
	if err != nil {
		skipOrFail(tb, "etcd binary: %v", err)
	}
	return path
}

// BuildBinary is Binary for callers without a test: it returns the build's error.
func BuildBinary() (string, error) {
	binary.Lock()
	defer binary.Unlock()
	if binary.path != "" {
		return binary.path, nil
	}
	path, err := cachedBinaryPath()
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		binary.path = path
		return path, nil
	}
	if err := buildLocked(path); err != nil {
		return "", err
	}
	binary.path = path
	return path, nil
}

// cachedBinaryPath is where the binary for this etcd and Go version lives.
func cachedBinaryPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = filepath.Join(os.TempDir(), "devgraph-cache-"+fmt.Sprint(os.Getuid()))
	}
	name := fmt.Sprintf("etcd-v%s-%s-%s-%s", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return filepath.Join(dir, "devgraph", name), nil
}

// buildLocked builds path under a lock file beside it, unless another process built it while
// this one waited for the lock.
func buildLocked(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache dir: %w", err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("temp file: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// The go that runs the tests, when it says where it is; else the one on PATH.
	gobin := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		if _, err := os.Stat(filepath.Join(root, "bin", "go")); err == nil {
			gobin = filepath.Join(root, "bin", "go")
		}
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-o", tmp.Name(), binaryPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s (run from inside the devgraph module): %v: %s", binaryPkg, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("install %s: %w", path, err)
	}
	return nil
}

// skipOrFail stops the test when a tool it needs is missing: a failure under CI=true, a skip
// with the reason elsewhere.
func skipOrFail(tb TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf(format, args...)
	}
	tb.Skipf(format, args...)
}
