// How a sample's transfers reach the GPU: an engine says which its launch() allows, and the
// measurement loop (measure/transfer_timer.hpp) feeds and times the sample accordingly.
#pragma once

namespace p2pbench {

enum class Feeding {
  // launch() only queues capturable work: the sample is one CUDA graph, launched behind the gate.
  kCaptured,
  // launch() queues asynchronous work that no graph can hold (cudaMemcpyBatchAsync): the transfers
  // are queued one by one, as many as the launch queue holds behind the closed gate, the rest once
  // it opened; timed with CUDA events like a graph.
  kQueued,
  // launch() makes synchronous host calls (file I/O): called once per transfer after the gate
  // opened, and the sample timed with the host clock until the stream's work is done.
  kHostDriven,
};

}  // namespace p2pbench
