package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopGrace is how long a verb has, after SIGINT or SIGTERM, to return
// before the process exits without it.
const stopGrace = 10 * time.Second

// signalContext is the verbs' context: SIGINT or SIGTERM cancels it, and
// every verb stops on its context. A verb that has not returned stopGrace
// after the signal, or by a second signal, is not waited for: the process
// says so on stderr and exits with status 1. That is for a verb held where
// no context reaches, such as the open of a named pipe nobody writes to
// (`run --script FIFO`): catching the signal must not make the process
// unstoppable. stop ends the watch once the verb has returned.
func signalContext(stderr io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
			cancel()
		case <-done:
			return
		}
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case <-done:
			return
		case again := <-sigs:
			fmt.Fprintf(stderr, "engine: %v again: exiting now\n", again)
		case <-grace.C:
			select {
			case <-done:
				return
			default:
			}
			fmt.Fprintf(stderr, "engine: still running %s after the signal (%v): exiting\n", stopGrace, sig)
		}
		exit(1)
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
