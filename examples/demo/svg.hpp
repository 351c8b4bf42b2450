// A tiny plot writer: lines and markers on linear axes, saved as an SVG file
// that a browser opens.
#pragma once

#include <string>
#include <vector>

namespace svg {

struct Style {
  std::string color = "#1f77b4";
  double width = 2;       // pixels
  double opacity = 1;
  bool dashed = false;
};

class Plot {
 public:
  Plot(std::string title, std::string x_label, std::string y_label);

  // A polyline through (xs[i], ys[i]); a label puts it in the legend.
  void line(std::vector<double> xs, std::vector<double> ys, Style style, std::string label = "");
  // A dot at (x, y), in the legend.
  void marker(double x, double y, std::string color, std::string label);
  // One unit is as long on both axes (for trajectories).
  void equal_scale() { equal_scale_ = true; }

  // Writes the file; throws std::runtime_error if it cannot.
  void save(const std::string& path) const;

 private:
  struct Frame;  // the axes' ranges and the mapping to pixels
  struct Series {
    std::vector<double> xs, ys;
    Style style;
    std::string label;
    bool is_marker;
  };
  Frame frame() const;
  std::string axes(const Frame& f) const;
  std::string data(const Frame& f) const;
  std::string legend() const;

  std::string title_, x_label_, y_label_;
  std::vector<Series> series_;
  bool equal_scale_ = false;
};

}  // namespace svg
