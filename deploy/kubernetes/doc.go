// Package kubernetes holds no code: it is the home of loadcurve's Kubernetes manifests (an
// Indexed Job of shards, a merge Job, a shared volume, the run's ConfigMap) and of the test that
// decodes every manifest strictly into the official API types and checks their wiring, so the
// manifests are validated without a cluster. See README.md for the walkthrough.
package kubernetes
