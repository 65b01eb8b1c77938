#include "bwsim/kernel/Pipeline.hpp"

#include <gtest/gtest.h>

namespace bwsim {
namespace {

TEST(PipelineStateTest, IncrementWrapsTheIndexAndFlipsThePhase) {
  PipelineState s = make_consumer_start_state(3);
  const std::uint32_t want_index[] = {1, 2, 0, 1, 2, 0, 1};
  const std::uint32_t want_phase[] = {0, 0, 1, 1, 1, 0, 0};
  for (int i = 0; i < 7; ++i) {
    ++s;
    EXPECT_EQ(s.index, want_index[i]);
    EXPECT_EQ(s.phase, want_phase[i]);
    EXPECT_EQ(s.count, static_cast<std::uint32_t>(i + 1));
  }
}

TEST(PipelineStateTest, ProducerStartsAtPhaseOneConsumerAtZero) {
  EXPECT_EQ(make_producer_start_state(4).phase, 1u);
  EXPECT_EQ(make_consumer_start_state(4).phase, 0u);
  PipelineState one = make_producer_start_state(1);
  ++one;
  EXPECT_EQ(one.index, 0u);
  EXPECT_EQ(one.phase, 0u);
}

TEST(PipelineBarriersTest, FullAndEmptyBarriersAreLaidOutAfterEachOther) {
  PipelineBarriers b(SmemAddr{256}, 4, "p");
  EXPECT_EQ(b.full(0).offset, 256u);
  EXPECT_EQ(b.full(3).offset, 280u);
  EXPECT_EQ(b.empty(0).offset, 288u);
  EXPECT_EQ(b.empty(3).offset, 312u);
  EXPECT_EQ(PipelineBarriers::smem_bytes(4), 64u);
}

}  // namespace
}  // namespace bwsim
