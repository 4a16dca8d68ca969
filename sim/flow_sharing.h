// Max-min fair sharing of link capacity among the transfers in flight
// (docs/ARCHITECTURE.md, 'Simulator'): progressive filling raises every
// flow's rate together until a link saturates, freezes the flows through it,
// and repeats. Ties break by the lower link index, so the result is
// deterministic.
//
// Units: capacities and rates in bytes per nanosecond (= GB/s).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace zosched {

class FlowSharing {
 public:
  // `capacities[l]`: the capacity of link l (Network::links() order).
  explicit FlowSharing(std::vector<double> capacities = {});

  // Starts again for links of `capacities`: as if newly constructed, but
  // keeping the memory (for a simulator that simulates one schedule after
  // another; the patterns kept are forgotten, as their paths are).
  void Reset(const std::vector<double>& capacities);

  // Sets (*rates)[f] for each flow f, whose path is the links in
  // `*flow_links[f]`, to its max-min fair share.
  //
  // A path is known by its address: the links of a path given to Share must
  // not change while this FlowSharing is in use (a simulation builds its
  // routes once). The rates are a function of the paths alone, and a
  // schedule's flows in flight repeat a few patterns (every block moves the
  // same transfers), so each pattern's rates are kept, up to a bounded number
  // of flows in all, and given again bit for bit when it recurs. The scratch
  // is sized once per link and grows with the most flows seen, so a
  // simulation's calls stop allocating once it is warm.
  void Share(const std::vector<const std::vector<int>*>& flow_links, std::vector<double>* rates);

 private:
  // A pattern: its flows' paths and their rates.
  struct Pattern {
    int begin, end;  // in pattern_paths_ and pattern_rates_
  };
  static uint64_t Hash(const std::vector<const std::vector<int>*>& flow_links);
  bool Matches(const Pattern& pattern,
               const std::vector<const std::vector<int>*>& flow_links) const;
  // Progressive filling.
  void Fill(const std::vector<const std::vector<int>*>& flow_links, std::vector<double>* rates);

  std::vector<double> capacity_;
  // Per link: capacity not yet given out, unfrozen flows crossing it.
  std::vector<double> residual_;
  std::vector<int> unfrozen_;
  std::vector<int> active_links_;  // the links some unfrozen flow crosses
  std::vector<char> frozen_;       // per flow
  // Per link: the flows crossing it, in flow order (CSR: the flows of link l
  // are crossing_[crossing_begin_[l] .. crossing_begin_[l] + unfrozen count
  // at the start)).
  std::vector<int> crossing_begin_, crossing_fill_, crossing_;
  // Patterns seen, by the hash of their paths.
  absl::flat_hash_map<uint64_t, int> pattern_of_hash_;
  std::vector<Pattern> patterns_;
  std::vector<const std::vector<int>*> pattern_paths_;
  std::vector<double> pattern_rates_;
};

}  // namespace zosched
