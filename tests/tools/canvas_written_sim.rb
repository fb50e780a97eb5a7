# Draw quiz submissions from a canvas-qti.zip as Canvas imported it, with Canvas's own group
# draw (classic quizzes' QuizQuestionBuilder::GroupPool#draw), and check that every written
# part a student gets belongs to the graded part they drew (a tool, not a test: it needs
# Canvas's code, laid out as /work/shared/lms/canvas/README.md says).
#
#   bash /work/shared/lms/canvas/check.sh canvas-qti.zip key.json   # prints "work: DIR"
#   CANVAS_GIT=.../canvas-lms/.git ruby tests/tools/canvas_written_sim.rb DIR/report.json key.json [N]
#
# Per submission: the graded items drawn must be, per slot, what one sheet printed there
# (distinct questions; the Canvas total the sheets' total, every sheet's being equal); every graded item whose version has a written
# part must show that part's prompt in the text Canvas converted, with the slot's essay drawn
# too; no essay may state a version's written prompt itself (it refers to the graded item).
# Last line: "written: ... problems K"; exit 1 on any problem.
require "json"
require "active_support"
require "active_support/core_ext"
module Quizzes; class QuizQuestionBuilder; end; end
src = `git --git-dir=#{ENV.fetch("CANVAS_GIT")} show HEAD:app/models/quizzes/quiz_question_builder/group_pool.rb`
eval(src)
rep = JSON.parse(File.read(ARGV[0]))
key = JSON.parse(File.read(ARGV[1]))
n = (ARGV[2] || 2000).to_i
srand(1)

# a written prompt's words before its first math: what the converted text must show
def words(prompt) = prompt.split("$").first.strip

texts = rep["questions"].to_h { |q| [q["question_name"], q["question_text"].to_s] }
types = rep["questions"].to_h { |q| [q["question_name"], q["question_type"]] }
written = {}   # [sheet, question id] -> the prompt words of its written parts
slot_of = {}   # question id -> its slot (itself, or its pool)
sheets = key["sheets"].map do |s|
  s["questions"].each do |q|
    slot_of[q["id"]] = q["slot"] || q["id"]
    kinds = q["kinds"] || {}
    written[[s["id"], q["id"]]] = q["parts"].select { |p| kinds[p["answer"]] == "text" }.map { |p| words(p["prompt"]) }
  end
  [s["id"], s["questions"].map { |q| q["id"] }.sort, s["questions"].sum { |q| q["points"].to_f }, s["questions"]]
end
all_prompts = written.values.flatten.uniq.reject(&:empty?)
quiz = rep["quizzes"].first
id = 0
groups = quiz["groups"].map do |g|
  { title: g["title"], pick: g["pick_count"].to_i, points: g["question_points"].to_f,
    questions: g["questions"].map { |r| { id: (id += 1), name: r["question_name"] } } }
end
problems = Hash.new(0)
stats = Hash.new(0)
n.times do
  picked = { aq: [], qq: [] }
  mark = ->(qs) { picked[:qq].concat(qs.map { |q| q[:id] }) }
  drawn = []
  groups.each do |g|
    pool = Quizzes::QuizQuestionBuilder::GroupPool.new(g[:questions], picked, &mark)
    pool.draw(1, 1, g[:pick]).each { |q| drawn << q.merge(points: g[:points]) }
  end
  # a slot's written part (an essay named "(written)"), or a version of its own (a question
  # with written parts only: an essay of one sheet, which states its own prompt)
  essays = drawn.select { |q| q[:name].end_with?("(written)") }
  graded = drawn - essays
  ids = []
  essay_slots = essays.map { |e| e[:name][/^\d+\. (\S+)/, 1] }
  graded.each do |g|
    head, sheet = g[:name].match(/^\d+\. (\S+) \[(.+)\]$/).captures
    # a pool's deal holds the sheet's picks of the pool; any other item one version
    sheet_row = sheets.find { |sid, _, _, _| sid == sheet }
    versions = sheet_row[3].map { |q| q["id"] }.select { |qid| qid == head || slot_of[qid] == head }
    ids.concat(versions)
    slot = slot_of[versions.first]
    prompts = versions.flat_map { |qid| written[[sheet, qid]] }
    next if prompts.empty? || types[g[:name]] == "essay_question"
    stats["graded items with a written part"] += 1
    text = texts[g[:name]]
    problems["written prompt of the drawn version not shown in its graded item"] += 1 unless prompts.all? { |p| text.include?(p) }
    if essay_slots.include?(slot)
      stats["... with the slot's essay drawn too"] += 1
    else
      problems["graded item with a written part but no essay of its slot"] += 1
    end
  end
  drawn_sheet = {}  # question id -> the sheet of the version drawn
  graded.each do |g|
    head, sheet = g[:name].match(/^\d+\. (\S+) \[(.+)\]$/).captures
    drawn_sheet[head] = sheet
  end
  essays.each do |e|
    slot = e[:name][/^\d+\. (\S+)/, 1]
    # an older export's essay of one version ("N. q [B] (written)"): of the version drawn?
    own = e[:name][/\[(.+)\] \(written\)$/, 1]
    problems["essay of another version than the graded part drawn"] += 1 if own && drawn_sheet[slot] != own
    problems["essay stating a version's own prompt"] += 1 if all_prompts.any? { |p| texts[e[:name]].include?(p) }
    problems["essay of a slot whose graded part was not drawn"] += 1 unless ids.any? { |qid| slot_of[qid] == slot }
  end
  problems["same question twice"] += 1 if ids.uniq.size < ids.size
  # what the bank's pool rule can print: per slot, what some sheet printed there (pools draw
  # apart from each other), and every slot once
  by_slot = ids.group_by { |qid| slot_of[qid] }
  fits = by_slot.all? do |slot, got|
    sheets.any? { |_, _, _, qs| qs.map { |q| q["id"] }.select { |qid| slot_of[qid] == slot }.sort == got.sort }
  end
  fits &&= by_slot.keys.sort == sheets.first[3].map { |q| slot_of[q["id"]] }.uniq.sort
  total = drawn.sum { |q| q[:points] }
  if fits && sheets.all? { |_, _, t, _| (t - total).abs < 1e-9 }
    stats["per slot a set a sheet printed, Canvas total the sheets' total"] += 1
  else
    problems["a slot's set of no sheet, or a total not the sheets'"] += 1
  end
end
puts "#{n} simulated Canvas submissions (GroupPool#draw):"
stats.each { |k, v| puts "  #{k}: #{v}" }
problems.each { |k, v| puts "  PROBLEM #{k}: #{v}/#{n}" }
puts "written: submissions #{n}, problems #{problems.values.sum}"
exit(problems.values.sum.zero? ? 0 : 1)
