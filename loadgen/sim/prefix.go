package sim

// prefixCache is an LRU set of prompt-block hashes, bounded in blocks. Each
// hash covers its block and, through the chain, every block before it, so a
// hit on block i implies the whole prefix up to i matches.
type prefixCache struct {
	capacity int
	index    map[uint64]int32
	nodes    []lruNode // nodes[0] is the list sentinel
}

type lruNode struct {
	hash       uint64
	prev, next int32
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{
		capacity: capacity,
		index:    make(map[uint64]int32, min(capacity, 1<<16)),
		nodes:    make([]lruNode, 1, min(capacity, 1<<16)+1),
	}
}

func (c *prefixCache) unlink(i int32) {
	n := &c.nodes[i]
	c.nodes[n.prev].next = n.next
	c.nodes[n.next].prev = n.prev
}

// pushFront makes i the most recently used node.
func (c *prefixCache) pushFront(i int32) {
	head := &c.nodes[0]
	n := &c.nodes[i]
	n.prev, n.next = 0, head.next
	c.nodes[head.next].prev = i
	head.next = i
}

// lookup returns how many leading blocks of hashes are cached, marking them
// recently used.
func (c *prefixCache) lookup(hashes []uint64) int {
	for i, h := range hashes {
		j, ok := c.index[h]
		if !ok {
			return i
		}
		c.unlink(j)
		c.pushFront(j)
	}
	return len(hashes)
}

// insert adds every block of hashes (or refreshes it), evicting the least
// recently used blocks beyond capacity.
func (c *prefixCache) insert(hashes []uint64) {
	for _, h := range hashes {
		if j, ok := c.index[h]; ok {
			c.unlink(j)
			c.pushFront(j)
			continue
		}
		var j int32
		switch {
		case len(c.index) >= c.capacity:
			j = c.nodes[0].prev // least recently used
			c.unlink(j)
			delete(c.index, c.nodes[j].hash)
		default:
			c.nodes = append(c.nodes, lruNode{})
			j = int32(len(c.nodes) - 1)
		}
		c.nodes[j].hash = h
		c.index[h] = j
		c.pushFront(j)
	}
}

// len is the number of cached blocks.
func (c *prefixCache) len() int { return len(c.index) }
