// A step's arguments and results are parsed inert (a template) and become
// a details element the first time its row is clicked; later clicks
// toggle it.
document.getElementById("steps").addEventListener("click", function (e) {
	var row = e.target.closest(".step > .row");
	if (!row) return;
	var step = row.parentElement, d = step.querySelector(":scope > details");
	if (d) { d.open = !d.open; return; }
	var t = step.querySelector(":scope > template");
	if (!t) return;
	d = document.createElement("details");
	d.className = "io";
	var s = document.createElement("summary");
	s.textContent = "arguments and results of step " + step.dataset.n;
	d.append(s, t.content.cloneNode(true));
	d.open = true;
	step.append(d);
});
