package main

import (
	"os"
	"strconv"
	"strings"
)

// processStopped reports whether process pid is stopped (SIGSTOP, Ctrl-Z in its
// terminal, a debugger): it then answers nothing, and ignores kill until it is continued.
// It reads /proc/<pid>/stat, so it is false where there is no procfs.
func processStopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state …: comm may hold spaces and parentheses, so read after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'T' || b[i+2] == 't'
}
