// story.ts - building a guided story (web/lab/view.ts's Story): a view's
// scenarios add operations one by one, each with the caption the lab shows
// when it is the current step, and get back the index a later operation can
// name (SLUB: "the object step 3 allocated"; percpu: "the areas of step 1").

export class StoryBuilder<Op> {
  readonly ops: Op[] = [];
  readonly captions: string[] = [];

  /** Adds an operation and its caption; returns its index. */
  op(o: Op, caption: string): number {
    this.ops.push(o);
    this.captions.push(caption);
    return this.ops.length - 1;
  }
}
