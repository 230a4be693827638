package result_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
)

// TestMain lets the test binary hold a directory's lock as another process would
// (LOADCURVE_TEST_HOLD_LOCK=DIR): it locks DIR, says so on stdout, and waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("LOADCURVE_TEST_HOLD_LOCK"); dir != "" {
		if _, err := result.LockDir(dir); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPrepareRacing starts two writers on one new directory at once, 50 times (issue 39: two
// runs started at once on one new --out both found it free, both exited 0, and records.jsonl
// held both runs' lines): every time exactly one holds the directory and the other is refused
// as busy, naming the directory (and this process, once the holder has written its pid); once the first has written its result and
// released the lock, a third is refused because the directory holds a result.
func TestPrepareRacing(t *testing.T) {
	const rounds = 50
	won, busy := 0, 0
	for round := range rounds {
		dir := filepath.Join(t.TempDir(), "out")
		var wg sync.WaitGroup
		start := make(chan struct{})
		locks := make([]*result.Lock, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				locks[i], errs[i] = result.Prepare(result.Out{Dir: dir, Kind: result.Measured})
			}()
		}
		close(start)
		wg.Wait()
		var winner *result.Lock
		for i := range 2 {
			var b *result.BusyError
			switch {
			case errs[i] == nil && locks[i] != nil:
				won++
				winner = locks[i]
			case errors.As(errs[i], &b) && b.Dir == dir && (b.PID == 0 || b.PID == os.Getpid()) && strings.HasPrefix(b.Error(), "another loadcurve "):
				// The pid is written just after the lock is taken: a refusal in between has none.
				busy++
			default:
				t.Fatalf("round %d: writer %d: lock %v, error %v", round, i, locks[i], errs[i])
			}
		}
		if winner == nil {
			t.Fatalf("round %d: no writer holds the directory: %v", round, errs)
		}
		if err := os.WriteFile(filepath.Join(dir, result.RecordsName), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := winner.Release(); err != nil {
			t.Fatal(err)
		}
		var taken *result.TakenError
		if _, err := result.Prepare(result.Out{Dir: dir, Kind: result.Measured}); !errors.As(err, &taken) {
			t.Fatalf("round %d: a writer after the first ended: %v, want the directory taken", round, err)
		}
		if _, err := os.Stat(filepath.Join(dir, result.LockName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("round %d: the lock file is left behind: %v", round, err)
		}
	}
	if won != rounds || busy != rounds {
		t.Errorf("%d rounds: %d held, %d refused as busy; want one of each every round", rounds, won, busy)
	}
	t.Logf("%d rounds of two writers at once: %d held the directory, %d were refused as busy", rounds, won, busy)
}

// TestLockHeldByAnotherProcess: a directory another process holds is refused naming that
// process's pid; once it is killed with -9 the directory is free at once, without a stale lock
// to remove (flock is released by the kernel).
func TestLockHeldByAnotherProcess(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && !strings.HasSuffix(runtime.GOOS, "bsd") {
		t.Skip("the lock is a file made with O_EXCL here, which a kill leaves behind")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOADCURVE_TEST_HOLD_LOCK="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the other process did not lock %s: %q", dir, line)
	}
	_, err = result.LockDir(dir)
	var busy *result.BusyError
	if !errors.As(err, &busy) || busy.PID != cmd.Process.Pid {
		t.Fatalf("LockDir while pid %d holds it: %v", cmd.Process.Pid, err)
	}
	if want := fmt.Sprintf("another loadcurve process (pid %d) is writing a result into %s", cmd.Process.Pid, dir); err.Error() != want {
		t.Errorf("refusal %q, want %q", err, want)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: nothing of the holder runs
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, result.LockName)); err != nil {
		t.Fatalf("the killed holder's lock file: %v (it should still be there, unlocked)", err)
	}
	l, err := result.LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after the holder was killed: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}
