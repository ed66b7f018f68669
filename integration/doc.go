// Package integration holds Stepgate's end-to-end tests: real embedded
// nats-servers, several engine hosts on one stream, and real engine
// processes that are restarted and killed. It has no code of its own.
package integration
