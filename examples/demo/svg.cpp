#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

namespace svg {

namespace {

constexpr double width = 720, height = 480;
constexpr double left = 70, right = 20, top = 40, bottom = 55;  // margins around the axes' box
constexpr double box_width = width - left - right, box_height = height - top - bottom;

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  void include(double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  double span() const { return hi - lo; }
  // Padded by 5% on each side (a single value by a unit).
  Range padded() const {
    if (lo > hi) return {0, 1};
    const double pad = span() > 0 ? span() * 0.05 : 1;
    return {lo - pad, hi + pad};
  }
  Range widened_to(double span) const {
    const double middle = (lo + hi) / 2;
    return {middle - span / 2, middle + span / 2};
  }
};

// The tick spacing for about 8 ticks: 1, 2 or 5 times a power of ten.
double tick_step(double span) {
  const double raw = span / 8, power = std::pow(10., std::floor(std::log10(raw)));
  for (double m : {1., 2., 5.})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string text(double x, double y, const std::string& body, const std::string& attributes = "") {
  return "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\" " + attributes + ">" + escaped(body) + "</text>\n";
}

std::string segment(double x1, double y1, double x2, double y2, const std::string& attributes) {
  return "<line x1=\"" + number(x1) + "\" y1=\"" + number(y1) + "\" x2=\"" + number(x2) + "\" y2=\"" + number(y2) +
         "\" " + attributes + "/>\n";
}

std::string dot(double x, double y, double radius, const std::string& color) {
  return "<circle cx=\"" + number(x) + "\" cy=\"" + number(y) + "\" r=\"" + number(radius) + "\" fill=\"" + color +
         "\"/>\n";
}

std::string stroke(const Style& s) {
  return "fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"" + number(s.width) + "\" stroke-opacity=\"" +
         number(s.opacity) + "\"" + (s.dashed ? " stroke-dasharray=\"6 4\"" : "");
}

}  // namespace

struct Plot::Frame {
  Range x, y;
  double px(double v) const { return left + (v - x.lo) / x.span() * box_width; }
  double py(double v) const { return top + box_height - (v - y.lo) / y.span() * box_height; }
};

Plot::Plot(std::string title, std::string x_label, std::string y_label)
    : title_(std::move(title)), x_label_(std::move(x_label)), y_label_(std::move(y_label)) {}

void Plot::line(std::vector<double> xs, std::vector<double> ys, Style style, std::string label) {
  if (xs.size() != ys.size()) throw std::invalid_argument("svg::Plot::line: xs and ys differ in length");
  series_.push_back({std::move(xs), std::move(ys), std::move(style), std::move(label), false});
}

void Plot::marker(double x, double y, std::string color, std::string label) {
  series_.push_back({{x}, {y}, Style{std::move(color)}, std::move(label), true});
}

void Plot::save(const std::string& path) const {
  const Frame f = frame();
  std::ofstream file(path);
  file << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(width) << "\" height=\"" << number(height)
       << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
       << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
       << axes(f) << data(f) << legend() << "</svg>\n";
  if (!file.flush()) throw std::runtime_error("svg::Plot::save: cannot write " + path);
}

Plot::Frame Plot::frame() const {
  Range x, y;
  for (const Series& s : series_) {
    for (double v : s.xs) x.include(v);
    for (double v : s.ys) y.include(v);
  }
  x = x.padded(), y = y.padded();
  if (equal_scale_) {  // widen the axis that has more pixels per unit
    const double units_per_pixel = std::max(x.span() / box_width, y.span() / box_height);
    x = x.widened_to(units_per_pixel * box_width), y = y.widened_to(units_per_pixel * box_height);
  }
  return {x, y};
}

// The grid and tick labels at multiples of each axis's step, the box, the
// title and the axis labels.
std::string Plot::axes(const Frame& f) const {
  std::string out;
  const std::string grid = "stroke=\"#e5e5e5\"";
  const double x_step = tick_step(f.x.span()), y_step = tick_step(f.y.span());
  // (A tick's label adds 0. so that -0 prints as 0.)
  for (double k = std::ceil(f.x.lo / x_step); k * x_step <= f.x.hi; ++k) {
    out += segment(f.px(k * x_step), top, f.px(k * x_step), top + box_height, grid);
    out += text(f.px(k * x_step), top + box_height + 16, number(k * x_step + 0.), "text-anchor=\"middle\"");
  }
  for (double k = std::ceil(f.y.lo / y_step); k * y_step <= f.y.hi; ++k) {
    out += segment(left, f.py(k * y_step), left + box_width, f.py(k * y_step), grid);
    out += text(left - 6, f.py(k * y_step) + 4, number(k * y_step + 0.), "text-anchor=\"end\"");
  }
  out += "<rect x=\"" + number(left) + "\" y=\"" + number(top) + "\" width=\"" + number(box_width) + "\" height=\"" +
         number(box_height) + "\" fill=\"none\" stroke=\"black\"/>\n";
  out += text(width / 2, 24, title_, "text-anchor=\"middle\" font-size=\"16\"");
  out += text(left + box_width / 2, height - 14, x_label_, "text-anchor=\"middle\"");
  const std::string middle = number(top + box_height / 2);
  out += text(18, top + box_height / 2, y_label_, "text-anchor=\"middle\" transform=\"rotate(-90 18 " + middle + ")\"");
  return out;
}

// The lines, then the markers over them.
std::string Plot::data(const Frame& f) const {
  std::string out;
  for (const Series& s : series_) {
    if (s.is_marker) continue;
    out += "<polyline " + stroke(s.style) + " points=\"";
    for (std::size_t i = 0; i < s.xs.size(); ++i) out += number(f.px(s.xs[i])) + "," + number(f.py(s.ys[i])) + " ";
    out += "\"/>\n";
  }
  for (const Series& s : series_)
    if (s.is_marker) out += dot(f.px(s.xs[0]), f.py(s.ys[0]), 6, s.style.color);
  return out;
}

// The labelled series, one a row, at the top right (as far left as the
// longest label needs, at about 6.5 pixels a character).
std::string Plot::legend() const {
  std::size_t longest = 0;
  for (const Series& s : series_) longest = std::max(longest, s.label.size());
  std::string out;
  const double x = left + box_width - 44 - 6.5 * double(longest);
  double y = top + 20;
  for (const Series& s : series_) {
    if (s.label.empty()) continue;
    out += s.is_marker ? dot(x + 12, y - 4, 5, s.style.color) : segment(x, y - 4, x + 24, y - 4, stroke(s.style));
    out += text(x + 32, y, s.label);
    y += 18;
  }
  return out;
}

}  // namespace svg
