//go:build !linux

package fifo

import "time"

func fineSleep(d time.Duration) { time.Sleep(d) }
