package etcdtest

import (
	"os/exec"
	"runtime"
	"sync"
)

// Children get SIGKILL when the test process dies without running its cleanups (Pdeathsig).
// Linux sends that signal when the thread that started the child exits, not the process, and
// Go ends a thread when a goroutine locked to it returns. So every child is started from one
// goroutine locked to its thread, which lives as long as any child does.
var spawner struct {
	sync.Mutex
	live int
	reqs chan func()
}

// startChild starts cmd from the spawner's thread. A started child must be reported with
// childExited once it has been waited for.
func startChild(cmd *exec.Cmd) error {
	spawner.Lock()
	if spawner.live == 0 {
		spawner.reqs = make(chan func())
		go spawnLoop(spawner.reqs)
	}
	spawner.live++
	reqs := spawner.reqs
	spawner.Unlock()
	errc := make(chan error, 1)
	reqs <- func() { errc <- cmd.Start() }
	err := <-errc
	if err != nil {
		childExited()
	}
	return err
}

// childExited ends the spawner, and its thread, when no child is left.
func childExited() {
	spawner.Lock()
	defer spawner.Unlock()
	spawner.live--
	if spawner.live == 0 {
		close(spawner.reqs)
		spawner.reqs = nil
	}
}

func spawnLoop(reqs <-chan func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the loop, after its children
	for f := range reqs {
		f()
	}
}
