package loadgen

// HeldBytes is what c's requests in flight hold beyond their fixed buffers now, and the most
// they ever held, for the package's external tests.
func HeldBytes(c *Client) (now, peak int64) { return c.held.used.Load(), c.held.peak.Load() }
