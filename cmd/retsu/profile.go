//go:build pprof

// Profiling for performance work, in binaries built with -tags pprof only (as
// scripts/bench/profile.sh builds one): the first SIGUSR1 starts a CPU profile into the file
// RETSU_CPU_PROFILE names, the second stops it, so that a script profiles exactly the window
// of a load run.
// Release binaries have none of this.

package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	path := os.Getenv("RETSU_CPU_PROFILE")
	if path == "" {
		return
	}
	toggles := make(chan os.Signal, 1)
	signal.Notify(toggles, syscall.SIGUSR1)
	go func() {
		for range toggles {
			f, err := os.Create(path)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "retsu: cpu profile: %v\n", err)
				continue
			}
			<-toggles
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "retsu: cpu profile: %v\n", err)
			}
		}
	}()
}
