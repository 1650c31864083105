// Package deploy holds vrender's Kubernetes manifests (*.yaml, see
// README.md) and the test that decodes them strictly into the Kubernetes
// API types and checks their cross-references. It has no non-test code.
package deploy
